// A log2 histogram as the kernel keeps run-queue latency (bcc runqlat
// style): slot i counts values of [2^i, 2^(i+1)) microseconds, slot 0 also
// takes everything under 1 us, and the last slot everything too long for
// the others. Plus the count and the exact sum. Pure data: exporters turn it
// into Prometheus buckets, detectors read shares from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpunoise::model {

struct Log2Histogram {
  std::vector<uint64_t> slots;  // size fixed by the producer (bpf/runqlat.h)
  uint64_t count = 0;
  uint64_t sum_ns = 0;

  // Adds `other` slot by slot (growing to the longer of the two).
  void Add(const Log2Histogram& other);
  // The upper bound of slot `i` in seconds: 2^(i+1) us. The last slot has
  // none (it is the +Inf bucket).
  static double UpperBoundSeconds(size_t i);
  // Values at least `threshold_us` (a power of two) or longer, counted
  // from the slots (exact at slot boundaries).
  uint64_t CountAtLeastUs(uint64_t threshold_us) const;
};

// `later` minus `earlier` per slot; a slot that went down (the kernel map
// was recreated) counts from zero, as a Prometheus counter reset does.
Log2Histogram HistogramDelta(const Log2Histogram& earlier, const Log2Histogram& later);

}  // namespace gpunoise::model
