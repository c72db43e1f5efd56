#include "record/cpu_staging.h"

#include <algorithm>

namespace gpunoise::record {

size_t CpuStaging::CutPoint() const {
  int lowest = -1;
  size_t last = used_;
  for (size_t i = 0; i < used_; ++i) {
    if (batched_[i]) continue;
    int level = model::ContextLevel(events_[i]);
    if (lowest < 0 || level <= lowest) {
      lowest = level;
      last = i;
    }
  }
  return last;
}

uint64_t CpuStaging::FloorOf(const Floors& f) const {
  uint64_t floor = std::numeric_limits<uint64_t>::max();
  for (size_t s = 0; s < kMaxStreams; ++s)
    if (stream_mask_ & (1u << s)) floor = std::min(floor, f[s]);
  return floor;
}

std::span<const model::Event> CpuStaging::Writable(bool ring_cut, bool all_in) {
  size_t considered = ring_cut && used_ > 0 ? CutPoint() : used_;
  Floors floors = floors_;
  for (const BatchEnd& b : batch_ends_)
    if (b.end <= considered) floors[b.stream] = std::max(floors[b.stream], b.flush_ts);
  uint64_t floor = FloorOf(floors);
  size_t writable = considered;
  if (stream_mask_ && !all_in) {
    // Events stamped after the floor move behind the written ones, in the
    // order they came (the cut rule reads that order next time).
    held_.clear();
    held_batched_.clear();
    writable = 0;
    for (size_t i = 0; i < considered; ++i) {
      if (events_[i].ts <= floor) {
        if (writable != i) {
          events_[writable] = std::move(events_[i]);
          batched_[writable] = batched_[i];
        }
        ++writable;
      } else {
        held_.push_back(std::move(events_[i]));
        held_batched_.push_back(batched_[i]);
      }
    }
    for (size_t j = 0; j < held_.size(); ++j) {
      events_[writable + j] = std::move(held_[j]);
      batched_[writable + j] = held_batched_[j];
    }
  }
  if (writable == 0 && used_ > max_held_) writable = considered = used_;
  writable_ = writable;
  considered_ = considered;
  next_floors_ = floors;
  auto begin = events_.begin();
  auto end = begin + static_cast<ptrdiff_t>(writable_);
  auto by_ts = [](const model::Event& a, const model::Event& b) { return a.ts < b.ts; };
  if (!std::is_sorted(begin, end, by_ts)) SortWritable();
  return {events_.data(), writable_};
}

// Stable by time. Batches make every drain's events a few dozen interleaved
// runs (each batch one, the direct records between them), so this always
// runs with batching: sorting 16-byte keys and moving each event once costs
// 22.5 ns per event for 16k events, against 55.7 for std::stable_sort on the
// events themselves, which moves each event log2(n) times
// (bench/staging_sort_benchmark.cc, CPU time on this VM).
void CpuStaging::SortWritable() {
  keys_.resize(writable_);
  for (size_t i = 0; i < writable_; ++i) keys_[i] = {events_[i].ts, static_cast<uint32_t>(i)};
  std::sort(keys_.begin(), keys_.end());  // the position breaks ties: stable
  sorted_.resize(events_.size());  // the same size: Slot() grows batched_ with events_
  for (size_t j = 0; j < writable_; ++j) sorted_[j] = std::move(events_[keys_[j].second]);
  // The held-back events keep their places.
  for (size_t i = writable_; i < used_; ++i) sorted_[i] = std::move(events_[i]);
  std::swap(events_, sorted_);
}

void CpuStaging::Written() {
  floors_ = next_floors_;
  // Batches wholly before the considered point are done; the rest move with
  // their events.
  size_t kept = 0;
  for (const BatchEnd& b : batch_ends_)
    if (b.end > considered_) batch_ends_[kept++] = {b.end - writable_, b.flush_ts, b.stream};
  batch_ends_.resize(kept);
  considered_ = 0;
  if (writable_ == 0) return;
  auto begin = events_.begin();
  std::move(begin + static_cast<ptrdiff_t>(writable_), begin + static_cast<ptrdiff_t>(used_), begin);
  std::copy(batched_.begin() + static_cast<ptrdiff_t>(writable_), batched_.begin() + static_cast<ptrdiff_t>(used_),
            batched_.begin());
  used_ -= writable_;
  writable_ = 0;
}

}  // namespace gpunoise::record
