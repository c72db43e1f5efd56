// Perfetto nests slices on one track by time, so slices that overlap without
// nesting (kernels overlapping on one stream under programmatic dependent
// launch, NVTX start/end ranges, overhead on several threads) must go to
// separate tracks. A LaneSet hands out the first lane that is free at a
// slice's start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpunoise::cupti {

class LaneSet {
 public:
  explicit LaneSet(size_t max_lanes = 16) : max_lanes_(max_lanes) {}

  // The lane for [start, end]; lanes only grow up to max_lanes, after which
  // the last lane takes the overflow (and may show it nested).
  size_t Place(uint64_t start, uint64_t end) {
    for (size_t i = 0; i < last_end_.size(); ++i) {
      if (last_end_[i] <= start) {
        last_end_[i] = end;
        return i;
      }
    }
    if (last_end_.size() < max_lanes_) {
      last_end_.push_back(end);
      return last_end_.size() - 1;
    }
    size_t last = last_end_.size() - 1;
    if (end > last_end_[last]) last_end_[last] = end;
    return last;
  }

  size_t lanes() const { return last_end_.size(); }

 private:
  size_t max_lanes_;
  std::vector<uint64_t> last_end_;
};

}  // namespace gpunoise::cupti
