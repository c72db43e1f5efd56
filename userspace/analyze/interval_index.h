// Busy time over any range in O(log n): sorted, non-overlapping intervals
// with prefix sums of their lengths. Sliding-window detectors ask it once per
// window instead of walking the slices again.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace gpunoise::analyze {

class IntervalIndex {
 public:
  // Intervals must be added in start order and not overlap.
  void Add(uint64_t start, uint64_t end) {
    if (end <= start) return;
    starts_.push_back(start);
    ends_.push_back(end);
    prefix_.push_back(total() + (end - start));
  }
  bool empty() const { return starts_.empty(); }
  size_t size() const { return starts_.size(); }
  uint64_t total() const { return prefix_.empty() ? 0 : prefix_.back(); }

  // Covered time within [a, b).
  uint64_t Busy(uint64_t a, uint64_t b) const {
    if (b <= a || starts_.empty()) return 0;
    size_t i0 = static_cast<size_t>(std::upper_bound(ends_.begin(), ends_.end(), a) - ends_.begin());
    size_t i1 = static_cast<size_t>(std::lower_bound(starts_.begin(), starts_.end(), b) - starts_.begin());
    if (i0 >= i1) return 0;
    uint64_t sum = prefix_[i1 - 1] - (i0 ? prefix_[i0 - 1] : 0);
    if (starts_[i0] < a) sum -= a - starts_[i0];
    if (ends_[i1 - 1] > b) sum -= ends_[i1 - 1] - b;
    return sum;
  }

  // The first interval start at or after `ts`; UINT64_MAX when none.
  uint64_t NextStart(uint64_t ts) const {
    auto it = std::lower_bound(starts_.begin(), starts_.end(), ts);
    return it == starts_.end() ? std::numeric_limits<uint64_t>::max() : *it;
  }
  // Where the gapless run of intervals covering `ts` ends; `ts` when no
  // interval covers it. Walks the touching intervals: callers jump past them.
  uint64_t CoveredUntil(uint64_t ts) const {
    size_t i = static_cast<size_t>(std::upper_bound(ends_.begin(), ends_.end(), ts) - ends_.begin());
    if (i >= starts_.size() || starts_[i] > ts) return ts;
    while (i + 1 < starts_.size() && starts_[i + 1] == ends_[i]) ++i;
    return ends_[i];
  }

 private:
  std::vector<uint64_t> starts_, ends_, prefix_;  // prefix_[i]: lengths of 0..i
};

}  // namespace gpunoise::analyze
