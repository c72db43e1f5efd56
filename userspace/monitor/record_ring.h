// The flight recorder's memory: the most recent raw eBPF records (sched,
// irq, softirq), bounded in bytes and in age. Records are kept as the
// kernel wrote them (16-56 bytes each, about a third of a decoded
// model::Event) and decoded only when a dump needs them, so the same memory
// covers about three times as much history.
//
// Storage is a fixed set of equal chunks filled in turn; when all are in
// use the oldest chunk is emptied and reused, so memory stops growing once
// the ring is full and nothing is allocated per record.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

namespace gpunoise::monitor {

class RecordRing {
 public:
  // `max_bytes`: memory for records (split into chunks); `window_ns`: how
  // old a record may get.
  RecordRing(uint64_t max_bytes, uint64_t window_ns);

  // Appends one record of `cpu` (it starts with struct gn_header, whose
  // first field is the CLOCK_BOOTTIME timestamp).
  void Append(uint32_t cpu, std::span<const uint8_t> record);
  // Notes that `cpu` lost records (ring full) just before what comes next.
  void MarkLoss(uint32_t cpu);
  // Drops whole chunks whose records are all older than now - window.
  void Trim(uint64_t now_ns);

  struct Entry {
    uint32_t cpu = 0;
    bool loss_before = false;
    std::span<const uint8_t> record;  // empty for a loss mark
  };
  // Calls fn(entry) for every entry, oldest first.
  template <typename Fn>
  void ForEach(Fn fn) const;
  // Frees the oldest chunks as it goes: for a ring that is read once.
  template <typename Fn>
  void ConsumeAll(Fn fn);

  // Hands every record over to the returned ring (for a dump written on
  // another thread) and starts empty, without copying: memory peaks at two
  // rings while the dump is written and the live ring refills. What this
  // ring records next is complete from the newest record handed over.
  RecordRing TakeAll();

  // Data is complete on every CPU from here on: later than any record
  // that was dropped (0 when nothing was dropped yet).
  uint64_t complete_from() const { return complete_from_; }
  uint64_t oldest_ts() const;
  uint64_t newest_ts() const { return newest_ts_; }
  uint64_t records() const { return records_; }
  uint64_t bytes_in_use() const;   // chunk memory allocated
  uint64_t max_bytes() const { return chunk_bytes_ * max_chunks_; }
  uint64_t window_ns() const { return window_ns_; }

 private:
  struct Chunk {
    std::vector<uint8_t> data;  // capacity chunk_bytes_, size = bytes used
    uint64_t min_ts = UINT64_MAX;
    uint64_t max_ts = 0;
    uint64_t records = 0;
  };
  struct EntryHeader {
    uint32_t size;   // record bytes that follow (0 for a loss mark)
    uint16_t cpu;
    uint16_t flags;  // kLossMark
  };
  static constexpr uint16_t kLossMark = 1;

  Chunk& Writable(size_t need);
  void DropOldest();

  uint64_t chunk_bytes_;
  size_t max_chunks_;
  uint64_t window_ns_;
  std::vector<Chunk> chunks_;  // ring order starts at first_
  size_t first_ = 0;           // oldest chunk
  size_t used_ = 0;            // chunks holding data
  uint64_t complete_from_ = 0;
  uint64_t newest_ts_ = 0;
  uint64_t records_ = 0;
};

template <typename Fn>
void RecordRing::ForEach(Fn fn) const {
  for (size_t i = 0; i < used_; ++i) {
    const Chunk& c = chunks_[(first_ + i) % chunks_.size()];
    size_t off = 0;
    while (off + sizeof(EntryHeader) <= c.data.size()) {
      EntryHeader h;
      __builtin_memcpy(&h, c.data.data() + off, sizeof(h));
      off += sizeof(h);
      Entry e;
      e.cpu = h.cpu;
      e.loss_before = h.flags & kLossMark;
      e.record = std::span<const uint8_t>(c.data.data() + off, h.size);
      fn(e);
      off += (h.size + 7) & ~size_t{7};
    }
  }
}

template <typename Fn>
void RecordRing::ConsumeAll(Fn fn) {
  while (used_) {
    Chunk& c = chunks_[first_];
    size_t off = 0;
    while (off + sizeof(EntryHeader) <= c.data.size()) {
      EntryHeader h;
      __builtin_memcpy(&h, c.data.data() + off, sizeof(h));
      off += sizeof(h);
      Entry e;
      e.cpu = h.cpu;
      e.loss_before = h.flags & kLossMark;
      e.record = std::span<const uint8_t>(c.data.data() + off, h.size);
      fn(e);
      off += (h.size + 7) & ~size_t{7};
    }
    std::vector<uint8_t>().swap(c.data);  // give the memory back now
    c.records = 0;
    first_ = (first_ + 1) % chunks_.size();
    --used_;
  }
  records_ = 0;
}

}  // namespace gpunoise::monitor
