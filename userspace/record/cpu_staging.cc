#include "record/cpu_staging.h"

#include <algorithm>
#include <array>

namespace gpunoise::record {

uint64_t CpuStaging::UnreadBound() const {
  uint64_t bound = unread_bound_;
  std::array<bool, 4> last_seen{};  // per context level: its last record found
  for (size_t i = used_; i-- > 0;) {
    if (batched_[i] & kSourceMask) continue;  // batched: the floor's business
    int level = std::clamp(model::ContextLevel(events_[i]), 0, 3);
    if (!last_seen[level]) {
      // Perhaps still open: neither of its events bounds what is unread.
      last_seen[level] = true;
      if (i > 0 && (batched_[i - 1] & kFirstOfTwo)) --i;
      continue;
    }
    bound = std::max(bound, events_[i].ts);
  }
  return bound;
}

uint64_t CpuStaging::FloorOf(const Floors& f) const {
  uint64_t floor = std::numeric_limits<uint64_t>::max();
  for (size_t s = 0; s < kMaxStreams; ++s)
    if (stream_mask_ & (1u << s)) floor = std::min(floor, f[s]);
  return floor;
}

model::EventView CpuStaging::Writable(bool ring_cut, bool all_in) {
  Floors floors = floors_;
  for (const BatchEnd& b : batch_ends_) floors[b.stream] = std::max(floors[b.stream], b.flush_ts);
  next_floors_ = floors;
  constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();
  uint64_t limit = kNoLimit;
  if (!all_in) {
    if (stream_mask_) limit = FloorOf(floors);
    if (ring_cut) {
      unread_bound_ = UnreadBound();
      limit = std::min(limit, unread_bound_);
    }
  }
  size_t writable = used_;
  partitioned_ = false;
  early_ = false;
  if (limit != kNoLimit) {
    // Events stamped after the limit stay, in the order they came (the
    // bound reads that order next time); nothing moves until Written().
    floor_positions_.clear();
    held_positions_.clear();
    for (size_t i = 0; i < used_; ++i)
      (events_[i].ts <= limit ? floor_positions_ : held_positions_).push_back(static_cast<uint32_t>(i));
    writable = floor_positions_.size();
    partitioned_ = !held_positions_.empty();
  }
  // Bounded memory: a limit that has not moved for this long (no flush read,
  // no record read of a level seen before) gives way.
  if (writable == 0 && used_ > max_held_) {
    early_ = true;  // counted when written: a second Writable() must not count them twice
    writable = used_;
    partitioned_ = false;
  }
  writable_ = writable;
  if (!partitioned_) {
    auto begin = events_.begin();
    auto end = begin + static_cast<ptrdiff_t>(writable_);
    auto by_ts = [](const model::Event& a, const model::Event& b) { return a.ts < b.ts; };
    if (std::is_sorted(begin, end, by_ts)) return std::span<const model::Event>(events_.data(), writable_);
    floor_positions_.resize(writable_);
    for (size_t i = 0; i < writable_; ++i) floor_positions_[i] = static_cast<uint32_t>(i);
  }
  OrderByTime(floor_positions_);
  return {events_.data(), order_};
}

// Stable by time. With batching every drain's events are interleaved runs
// (each batch one, the direct records between them), so this always runs.
// But each source is nearly in order by itself: a stream's batches follow
// each other in time (each was flushed before the next one's records were
// stamped), and the direct records come in ring order. So the (ts, position)
// keys are laid out source by source (a counting pass, stable), which leaves
// a few ascending runs (one per source, plus one per record a nested program
// stamped out of claim order), and the runs are merged pairwise, bottom up:
// n log2(runs) key moves instead of a sort's n log2(n). The position breaks
// ties, so the order is the one a sort of the keys gives. No event moves:
// the writer reads them through order_ (bench/staging_sort_benchmark.cc).
void CpuStaging::OrderByTime(std::span<const uint32_t> positions) {
  const size_t n = positions.size();
  keys_.resize(n);
  std::array<uint32_t, kMaxStreams + 1> at{};
  for (uint32_t p : positions) ++at[batched_[p] & kSourceMask];
  uint32_t sum = 0;
  for (uint32_t& count : at) {  // counts -> each source's first place
    uint32_t c = count;
    count = sum;
    sum += c;
  }
  for (uint32_t p : positions) keys_[at[batched_[p] & kSourceMask]++] = {events_[p].ts, p};
  MergeRuns();
  order_.resize(n);
  for (size_t j = 0; j < n; ++j) order_[j] = keys_[j].second;
}

void CpuStaging::MergeRuns() {
  size_t n = keys_.size();
  runs_.clear();
  runs_.push_back(0);
  for (size_t i = 1; i < n; ++i)
    if (keys_[i] < keys_[i - 1]) runs_.push_back(static_cast<uint32_t>(i));
  runs_.push_back(static_cast<uint32_t>(n));
  merged_.resize(n);
  while (runs_.size() > 2) {
    next_runs_.clear();
    size_t count = runs_.size() - 1;
    for (size_t r = 0; r < count; r += 2) {
      auto a = keys_.begin() + runs_[r], m = keys_.begin() + runs_[r + 1];
      auto e = r + 2 <= count ? keys_.begin() + runs_[r + 2] : m;  // an odd last run is copied
      std::merge(a, m, m, e, merged_.begin() + runs_[r]);
      next_runs_.push_back(runs_[r]);
    }
    next_runs_.push_back(static_cast<uint32_t>(n));
    std::swap(keys_, merged_);
    std::swap(runs_, next_runs_);
  }
}

void CpuStaging::Written() {
  floors_ = next_floors_;
  batch_ends_.clear();  // their flush times are in floors_ now
  // What stays: the events held back, in the order they came.
  size_t stays = 0;
  if (partitioned_)
    for (uint32_t p : held_positions_) {
      if (p != stays) {
        events_[stays] = events_[p];
        batched_[stays] = batched_[p];
      }
      ++stays;
    }
  used_ = stays;
  if (early_) written_early_ += writable_;
  early_ = false;
  writable_ = 0;
  partitioned_ = false;
}

}  // namespace gpunoise::record
