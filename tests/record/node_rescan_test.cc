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

}  // namespace
}  // namespace gpunoise::record
