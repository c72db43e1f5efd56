#include "model/log2_histogram.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

TEST(Log2Histogram, UpperBoundsArePowersOfTwoMicroseconds) {
  // Slot 0: under 2 us; slot i: [2^i, 2^(i+1)) us.
  EXPECT_DOUBLE_EQ(Log2Histogram::UpperBoundSeconds(0), 2e-6);
  EXPECT_DOUBLE_EQ(Log2Histogram::UpperBoundSeconds(1), 4e-6);
  EXPECT_DOUBLE_EQ(Log2Histogram::UpperBoundSeconds(9), 1024e-6);
  EXPECT_DOUBLE_EQ(Log2Histogram::UpperBoundSeconds(25), 67.108864);
}

TEST(Log2Histogram, AddGrowsAndSums) {
  Log2Histogram a{{1, 2}, 3, 100};
  Log2Histogram b{{0, 1, 5}, 6, 50};
  a.Add(b);
  EXPECT_EQ(a.slots, (std::vector<uint64_t>{1, 3, 5}));
  EXPECT_EQ(a.count, 9u);
  EXPECT_EQ(a.sum_ns, 150u);
}

TEST(Log2Histogram, CountAtLeastUsCountsWholeSlots) {
  Log2Histogram h{{10, 20, 30, 40}, 100, 0};  // [0,2) [2,4) [4,8) [8,16) us
  EXPECT_EQ(h.CountAtLeastUs(0), 100u);
  EXPECT_EQ(h.CountAtLeastUs(4), 70u);
  EXPECT_EQ(h.CountAtLeastUs(8), 40u);
  EXPECT_EQ(h.CountAtLeastUs(16), 0u);
}

TEST(Log2Histogram, DeltaSubtractsSlotBySlot) {
  Log2Histogram earlier{{1, 2, 3}, 6, 1000};
  Log2Histogram later{{4, 2, 5}, 11, 1800};
  Log2Histogram d = HistogramDelta(earlier, later);
  EXPECT_EQ(d.slots, (std::vector<uint64_t>{3, 0, 2}));
  EXPECT_EQ(d.count, 5u);
  EXPECT_EQ(d.sum_ns, 800u);
}

TEST(Log2Histogram, DeltaAfterResetIsTheLaterHistogram) {
  Log2Histogram earlier{{10, 10}, 20, 1000};
  Log2Histogram later{{1, 0}, 1, 10};
  Log2Histogram d = HistogramDelta(earlier, later);
  EXPECT_EQ(d.slots, later.slots);
  EXPECT_EQ(d.count, 1u);
}

}  // namespace
}  // namespace gpunoise::model
