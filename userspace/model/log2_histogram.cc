#include "model/log2_histogram.h"

#include <algorithm>
#include <cmath>

namespace gpunoise::model {

void Log2Histogram::Add(const Log2Histogram& other) {
  if (slots.size() < other.slots.size()) slots.resize(other.slots.size(), 0);
  for (size_t i = 0; i < other.slots.size(); ++i) slots[i] += other.slots[i];
  count += other.count;
  sum_ns += other.sum_ns;
}

// static
double Log2Histogram::UpperBoundSeconds(size_t i) { return std::ldexp(1.0, static_cast<int>(i) + 1) * 1e-6; }

uint64_t Log2Histogram::CountAtLeastUs(uint64_t threshold_us) const {
  uint64_t total = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    // Slot i starts at 2^i us (slot 0 at 0).
    uint64_t lower = i == 0 ? 0 : (1ull << std::min<size_t>(i, 63));
    if (lower >= threshold_us) total += slots[i];
  }
  return total;
}

Log2Histogram HistogramDelta(const Log2Histogram& earlier, const Log2Histogram& later) {
  Log2Histogram out;
  out.slots.resize(later.slots.size(), 0);
  bool reset = later.count < earlier.count || later.sum_ns < earlier.sum_ns;
  for (size_t i = 0; i < later.slots.size(); ++i) {
    uint64_t before = i < earlier.slots.size() ? earlier.slots[i] : 0;
    reset = reset || later.slots[i] < before;
  }
  if (reset) return later;
  for (size_t i = 0; i < later.slots.size(); ++i)
    out.slots[i] = later.slots[i] - (i < earlier.slots.size() ? earlier.slots[i] : 0);
  out.count = later.count - earlier.count;
  out.sum_ns = later.sum_ns - earlier.sum_ns;
  return out;
}

}  // namespace gpunoise::model
