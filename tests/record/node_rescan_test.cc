#include <gtest/gtest.h>

#include "record/node_recording.h"

namespace gpunoise::record {
namespace {

TEST(NodeRescan, ACheapScanRunsOnceASecond) {
  EXPECT_EQ(NextRescanGapNs(0), 1'000'000'000u);
  EXPECT_EQ(NextRescanGapNs(1'200'000), 1'000'000'000u);  // 94 threads on this VM
}

TEST(NodeRescan, AScanDearerThanOnePercentOfACpuWaitsLonger) {
  // 5000 threads at ~13 us each: 65 ms, so every 6.5 s.
  EXPECT_EQ(NextRescanGapNs(65'000'000), 6'500'000'000u);
  EXPECT_EQ(NextRescanGapNs(10'000'001), 1'000'000'100u);
}

constexpr uint64_t kMs = 1'000'000;

TEST(NodeProcStat, ACheapReadComesEverySample) {
  EXPECT_EQ(NextProcStatGapNs(100 * kMs, 7'000), 100 * kMs);  // this 2-CPU VM
  EXPECT_EQ(NextProcStatGapNs(100 * kMs, 0), 100 * kMs);
  EXPECT_EQ(NextProcStatGapNs(100 * kMs, 100'000), 100 * kMs);
}

TEST(NodeProcStat, AReadDearerThanAThousandthOfACpuWaitsLonger) {
  // 0.5 ms a read (a node with hundreds of CPUs and thousands of
  // interrupts): every 500 ms instead of every 100.
  EXPECT_EQ(NextProcStatGapNs(100 * kMs, 500'000), 500 * kMs);
  EXPECT_EQ(NextProcStatGapNs(100 * kMs, 100'001), 100'001'000u);
}

TEST(NodeLogReads, AStormSeenInOneReadSetsTheCadenceFromItsRate) {
  // 6,700 entries in 100 ms (67k a second, a TLB-shootdown storm): a
  // quarter of a 2048-entry log fills in 7.6 ms, so the next read is at the
  // shortest gap at once, not after three halvings.
  EXPECT_EQ(NextLogReadGapNs(100 * kMs, 6700, 2048, 10 * kMs, 100 * kMs), 10 * kMs);
  // 1,024 in 100 ms: a quarter in 50 ms.
  EXPECT_EQ(NextLogReadGapNs(100 * kMs, 1024, 2048, 10 * kMs, 100 * kMs), 50 * kMs);
}

TEST(NodeLogReads, AQuietLogIsReadAtTheLongestGap) {
  EXPECT_EQ(NextLogReadGapNs(100 * kMs, 0, 2048, 10 * kMs, 100 * kMs), 100 * kMs);
  EXPECT_EQ(NextLogReadGapNs(10 * kMs, 3, 2048, 10 * kMs, 100 * kMs), 100 * kMs);
  // Never more often than the shortest gap, whatever the drain interval.
  EXPECT_EQ(NextLogReadGapNs(5 * kMs, 0, 2048, 10 * kMs, 5 * kMs), 10 * kMs);
}

}  // namespace
}  // namespace gpunoise::record
