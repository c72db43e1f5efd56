// Counter steps across resets and 32-bit wraps, and per-kind sums that do
// not count a driver's per-queue and device-level counters twice.
#include "model/nic_health.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpunoise::model {
namespace {

TEST(CounterStep, RisingCounterGivesItsDifference) {
  CounterStep s = StepCounter(100, 250);
  EXPECT_EQ(s.delta, 150u);
  EXPECT_FALSE(s.reset);
  EXPECT_FALSE(s.wrapped);
}

TEST(CounterStep, CountersThatResetOrWrapNeverGoNegative) {
  // A synthetic series: rises, device reset (back to small values), rises,
  // a 32-bit counter wraps, rises.
  const std::vector<uint64_t> series = {10, 500, 9000, 3, 40, 4294967000ull, 4294967290ull, 100, 400};
  uint64_t total = 0;
  int resets = 0, wraps = 0;
  for (size_t i = 1; i < series.size(); ++i) {
    CounterStep s = StepCounter(series[i - 1], series[i]);
    EXPECT_LT(s.delta, uint64_t{1} << 40) << "step " << i << " looks like a negative rate";
    total += s.delta;
    resets += s.reset;
    wraps += s.wrapped;
  }
  EXPECT_EQ(resets, 1);
  EXPECT_EQ(wraps, 1);
  // 490 + 8500, then 3 (from zero) + 37, 4294966960, 290, (6 + 100), 300
  EXPECT_EQ(total, 490u + 8500u + 3u + 37u + 4294966960ull + 290u + 106u + 300u);
}

TEST(CounterStep, A64BitCounterThatGoesDownIsAReset) {
  CounterStep s = StepCounter(uint64_t{1} << 40, 5);
  EXPECT_TRUE(s.reset);
  EXPECT_EQ(s.delta, 5u);
}

TEST(NicCounterTotals, DeviceLevelCounterWinsOverItsQueues) {
  std::vector<NicCounterTotal> t = {
      {"eth0", "rx_drops", NicCounterKind::kRxDrop, -1, 12},
      {"eth0", "rx0_drops", NicCounterKind::kRxDrop, 0, 5},
      {"eth0", "rx1_drops", NicCounterKind::kRxDrop, 1, 7},
      {"eth0", "rx_queue_0_xdp_packets", NicCounterKind::kRxPackets, 0, 30},
      {"eth0", "rx_queue_1_xdp_packets", NicCounterKind::kRxPackets, 1, 40},
      {"eth0", "odd", NicCounterKind::kOther, -1, 99},
  };
  auto sums = SumByKind(t);
  EXPECT_EQ(sums[NicCounterKind::kRxDrop], 12u);
  EXPECT_EQ(sums[NicCounterKind::kRxPackets], 70u);
  EXPECT_EQ(sums.count(NicCounterKind::kOther), 0u);
}

TEST(LinkEventKinds, NamesRoundTrip) {
  for (auto k : {LinkEventKind::kCarrierDown, LinkEventKind::kCarrierUp, LinkEventKind::kSpeedChange,
                 LinkEventKind::kAppeared, LinkEventKind::kRemoved, LinkEventKind::kCounterReset})
    EXPECT_EQ(LinkEventKindFromName(LinkEventKindName(k)), k);
}

}  // namespace
}  // namespace gpunoise::model
