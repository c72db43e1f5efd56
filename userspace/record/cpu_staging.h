// One CPU's decoded records between its ring and the trace, and the rule
// that keeps each CPU's timestamps non-decreasing across drains.
//
// Records leave a ring in reservation order, but a program stamps its record
// after reserving it (bpf/common.bpf.h gn_reserve): one that interrupts another
// between the two holds a later ring position with an earlier timestamp. A
// drain that reads the ring to its end is safe (the consumer stops at a record
// still being written, so an interrupted record and the records nested in it
// leave together). A drain cut at its record budget is not: a record still in
// the ring may be older than one already read, but only than one whose
// program was still open when it was reserved; a program that had ended by
// then had stamped its record. Programs of one context level do not nest on a
// CPU, so an open program's record is the last one read of its level. Every
// record still in the ring is therefore younger than all other records read,
// and younger than every batch read (a flush stamps its batch before it
// reserves its place): events up to that bound are written, the rest wait.
// The bound moves with every record read, also through a storm that never
// leaves interrupt context, or whose only task record came first.
//
// Batched records (bpf/batch.bpf.h) reach the ring only when their CPU's
// batch is flushed, behind direct records stamped after them, so ring order
// says nothing about them; their batch's flush time does: everything stamped
// before a batch's flush is in it or in an earlier batch, and everything a
// later batch holds was stamped after it. Each batching object keeps its own
// batches (a stream, enum gn_batch_stream). With batching on, events stamped
// after the floor wait for the next drain: the earliest, over the streams, of
// each stream's last flush.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "model/event_view.h"
#include "model/events.h"

namespace gpunoise::record {

class CpuStaging {
 public:
  // Past this many staged events a cut drain is written whole: a storm that
  // never leaves interrupt context must not grow the staging for ever.
  static constexpr size_t kDefaultMaxHeld = 1 << 18;
  explicit CpuStaging(size_t max_held = kDefaultMaxHeld) : max_held_(max_held) {}

  // The slot for the next record; Push() keeps it (after a successful decode).
  // `batched`: it came out of a batch of `stream`.
  model::Event& Slot() {
    if (used_ == events_.size()) {
      events_.emplace_back();
      batched_.push_back(0);
    }
    return events_[used_];
  }
  // The slots for the next two events: a ring record holds at most two
  // (collect::DecodeRecordEvents); Push() keeps each that was decoded.
  std::span<model::Event, 2> Slots() {
    while (events_.size() < used_ + 2) {
      events_.emplace_back();
      batched_.push_back(0);
    }
    return std::span<model::Event, 2>(events_.data() + used_, 2);
  }
  static constexpr size_t kMaxStreams = 8;
  // `first_of_two`: the next event pushed comes from the same ring record
  // (a softirq slice's entry, then its exit).
  void Push(bool batched = false, uint32_t stream = 0, bool first_of_two = false) {
    batched_[used_++] = static_cast<uint8_t>((batched ? 1 + std::min<uint32_t>(stream, kMaxStreams - 1) : 0) |
                                             (first_of_two ? kFirstOfTwo : 0));
  }
  size_t staged() const { return used_; }

  // This CPU's records may come in batches of the streams in `stream_mask`
  // (bit s: stream s): hold back for them (see above). 0: no batching.
  void set_batching(uint32_t stream_mask) { stream_mask_ = stream_mask & ((1u << kMaxStreams) - 1); }
  // A batch of `stream` flushed at `flush_ts` ends here (after its records
  // were pushed). `from_ring`: it was read from the ring (not an idle CPU's
  // batch, read in place): what the ring holds behind it is younger.
  void EndBatch(uint64_t flush_ts, uint32_t stream = 0, bool from_ring = true) {
    if (stream >= kMaxStreams) return;
    if (from_ring) unread_bound_ = std::max(unread_bound_, flush_ts);
    // Empty batches of an idle CPU, drain after drain, replace each other.
    if (!batch_ends_.empty() && batch_ends_.back().end == used_ && batch_ends_.back().stream == stream) {
      batch_ends_.back().flush_ts = std::max(batch_ends_.back().flush_ts, flush_ts);
      return;
    }
    batch_ends_.push_back({used_, flush_ts, stream});
  }
  // Events stamped after it wait for a later drain. Max without batching.
  uint64_t floor() const { return FloorOf(floors_); }
  // Events the staging's bound wrote before their turn (no flush came while
  // the staging filled up): their order with what came later is not known.
  uint64_t written_early() const { return written_early_; }

  // The events to write now, sorted by time: all of them, unless the last
  // drain was cut at its budget (`ring_cut`): then those up to the bound on
  // what the ring still holds; and with batching those stamped up to the
  // floor. `all_in`: the programs are detached and every batch flushed and
  // drained, so nothing waits. The view reads the staged events in place
  // (valid until Written()); call Written() after writing them.
  model::EventView Writable(bool ring_cut, bool all_in = false);
  // Drops what Writable() returned; the held-back events move to the front,
  // in the order they came.
  void Written();

 private:
  struct BatchEnd {
    size_t end;  // staging position after the batch's last record
    uint64_t flush_ts;
    uint32_t stream;
  };
  using Floors = std::array<uint64_t, kMaxStreams>;  // per stream: its last flush
  uint64_t FloorOf(const Floors& f) const;
  // Every record still in the ring is stamped after this: the latest of the
  // staged direct records that are not the last of their context level (the
  // programs perhaps still open), and of unread_bound_.
  uint64_t UnreadBound() const;
  static constexpr uint8_t kFirstOfTwo = 0x80;  // in batched_: the record's other event follows
  static constexpr uint8_t kSourceMask = 0x7f;
  // order_: the staging positions in `positions` (ascending) by time.
  void OrderByTime(std::span<const uint32_t> positions);
  // Sorts keys_ by merging its ascending runs.
  void MergeRuns();

  std::vector<model::Event> events_;  // reused: no allocation once warm
  // Per event: 0 direct, 1 + s from a batch of stream s; | kFirstOfTwo.
  std::vector<uint8_t> batched_;
  std::vector<BatchEnd> batch_ends_;
  // Reused by Writable(): with batching, the positions stamped up to the
  // floor and those held back for it (each ascending); the order it returns.
  std::vector<uint32_t> floor_positions_, held_positions_;
  bool partitioned_ = false;  // some events are held: Written() compacts
  std::vector<uint32_t> order_;
  // Reused by the sort: (ts, position) keys, the merge's second buffer and
  // its runs' starts.
  std::vector<std::pair<uint64_t, uint32_t>> keys_;
  std::vector<std::pair<uint64_t, uint32_t>> merged_;
  std::vector<uint32_t> runs_, next_runs_;
  size_t used_ = 0;
  size_t writable_ = 0;
  Floors next_floors_{};
  // What the ring still holds was stamped after this (a running maximum).
  uint64_t unread_bound_ = 0;
  uint64_t written_early_ = 0;
  bool early_ = false;  // the last Writable() gave way to max_held_
  size_t max_held_;
  uint32_t stream_mask_ = 0;
  Floors floors_{};
};

}  // namespace gpunoise::record
