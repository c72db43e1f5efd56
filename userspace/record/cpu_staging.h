// One CPU's decoded records between its ring and the trace, and the rule
// that keeps each CPU's timestamps non-decreasing across drains.
//
// Records leave a ring in reservation order, but a program stamps its record
// after reserving it (bpf/common.bpf.h gn_reserve): one that interrupts another
// between the two holds a later ring position with an earlier timestamp. A
// drain that reads the ring to its end is safe (the consumer stops at a record
// still being written, so an interrupted record and the records nested in it
// leave together). A drain cut at its record budget is not: the cut can fall
// between an interrupted record and those nested in it. A record made at the
// lowest context level among those staged was reserved while no program of a
// lower level was open, so everything staged before it is older than it and
// everything after it: holding back from the last such record to the next
// drain restores order.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "model/events.h"

namespace gpunoise::record {

class CpuStaging {
 public:
  // Past this many staged events a cut drain is written whole: a storm that
  // never leaves interrupt context must not grow the staging for ever.
  static constexpr size_t kDefaultMaxHeld = 1 << 18;
  explicit CpuStaging(size_t max_held = kDefaultMaxHeld) : max_held_(max_held) {}

  // The slot for the next record; Push() keeps it (after a successful decode).
  model::Event& Slot() {
    if (used_ == events_.size()) events_.emplace_back();
    return events_[used_];
  }
  void Push() { ++used_; }
  size_t staged() const { return used_; }

  // The events to write now, sorted by time: all of them unless the last
  // drain was cut at its budget (`ring_cut`), then those before the held-back
  // tail. Call Written() after writing them.
  std::span<const model::Event> Writable(bool ring_cut);
  // Drops what Writable() returned; the held-back tail moves to the front.
  void Written();

 private:
  std::vector<model::Event> events_;  // reused: no allocation once warm
  size_t used_ = 0;
  size_t writable_ = 0;
  size_t max_held_;
};

}  // namespace gpunoise::record
