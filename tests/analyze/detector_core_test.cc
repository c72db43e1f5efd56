// The rules the report and the monitor share (storm_core.h,
// interference_core.h, nic_trouble_core.h), each at its threshold and just
// under it.
#include <gtest/gtest.h>

#include "analyze/interference_core.h"
#include "analyze/nic_trouble_core.h"
#include "analyze/storm_core.h"

namespace gpunoise::analyze {
namespace {

constexpr uint32_t kNetRx = 3, kTimer = 1;
constexpr uint64_t kMs = 1'000'000;

SoftirqWindow Window(uint64_t len) {
  SoftirqWindow w;
  w.cpu = 2;
  w.length_ns = len;
  return w;
}

TEST(StormCore, AVectorAtSoftirqShareOfItsWindowIsAStormAndJustUnderIsNot) {
  const StormRule rule = StormRule::From(Thresholds());
  EXPECT_EQ(rule.window_ns, 100 * kMs);
  SoftirqWindow w = Window(100 * kMs);
  w.vec_ns[kNetRx] = 30 * kMs;  // exactly 30%
  auto hits = EvaluateStormWindow(w, rule, kNetRx);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].vec, kNetRx);
  EXPECT_FALSE(hits[0].by_ksoftirqd);
  EXPECT_DOUBLE_EQ(hits[0].share, 0.30);
  w.vec_ns[kNetRx] = 29 * kMs + 900'000;  // 29.9%: a near miss
  EXPECT_TRUE(EvaluateStormWindow(w, rule, kNetRx).empty());
}

TEST(StormCore, TheSameBusyTimeIsDilutedInALongerWindow) {
  // What the monitor's 1 s interval does to a 100 ms storm at 100%.
  const StormRule rule = StormRule::From(Thresholds());
  SoftirqWindow w = Window(100 * kMs);
  w.vec_ns[kNetRx] = 100 * kMs;
  EXPECT_EQ(EvaluateStormWindow(w, rule, kNetRx).size(), 1u);
  w.length_ns = 1000 * kMs;
  EXPECT_TRUE(EvaluateStormWindow(w, rule, kNetRx).empty());
}

TEST(StormCore, KsoftirqdIsAStormOfItsVectorUnlessThatVectorsOwnStormIsThere) {
  const StormRule rule = StormRule::From(Thresholds());
  SoftirqWindow w = Window(100 * kMs);
  w.ksoftirqd_ns = 40 * kMs;
  w.vec_ns[kTimer] = 5 * kMs;
  w.vec_ns[kNetRx] = 20 * kMs;
  EXPECT_EQ(KsoftirqdVector(w.vec_ns), kNetRx);
  auto hits = EvaluateStormWindow(w, rule, KsoftirqdVector(w.vec_ns));
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_TRUE(hits[0].by_ksoftirqd);
  EXPECT_EQ(hits[0].vec, kNetRx);
  EXPECT_DOUBLE_EQ(hits[0].share, 0.40);
  // NET_RX's own storm in the same window: one storm, one hit.
  w.vec_ns[kNetRx] = 35 * kMs;
  hits = EvaluateStormWindow(w, rule, kNetRx);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_FALSE(hits[0].by_ksoftirqd);
  // Under softirq.ksoftirqd_share.
  w.vec_ns[kNetRx] = 0;
  w.ksoftirqd_ns = 29 * kMs;
  EXPECT_TRUE(EvaluateStormWindow(w, rule, kNetRx).empty());
  // Nothing ran: NET_RX is the vector ksoftirqd stands for.
  uint64_t none[model::kNumSoftirqVecs] = {};
  EXPECT_EQ(KsoftirqdVector(none), kNetRx);
}

TEST(StormCore, TheFindingNamesVectorDeviceAndQueueAsBothModesDo) {
  Finding f = StormFinding(1, kNetRx, false, "eth0", 3);
  EXPECT_EQ(f.detector, "softirq_storm");
  EXPECT_EQ(f.kind, "softirq_share");
  EXPECT_EQ(f.culprit, "softirq NET_RX from eth0 queue 3");
  EXPECT_EQ(f.culprit_kind, "softirq");
  EXPECT_EQ(f.cpus, std::vector<uint32_t>{1});
  EXPECT_EQ(StormFinding(1, kNetRx, true, "eth0", -1).culprit, "softirq NET_RX from eth0");
  EXPECT_EQ(StormFinding(1, kTimer, true, "", -1).kind, "ksoftirqd");
  EXPECT_EQ(StormFinding(1, kTimer, true, "", -1).culprit, "softirq TIMER");
}

TEST(InterferenceCore, ACulpritNeedsBothMinDelayAndMinShare) {
  const InterferenceRule rule = InterferenceRule::From(Thresholds());
  EXPECT_TRUE(rule.Reached(10 * kMs, 1000 * kMs));         // 10 ms, 1%
  EXPECT_FALSE(rule.Reached(10 * kMs - 1, 100 * kMs));     // under min_delay
  EXPECT_FALSE(rule.Reached(10 * kMs, 1001 * kMs));        // just under 1%
  EXPECT_DOUBLE_EQ(InterferenceShare(5, 0), 5.0);          // no observed time counts as 1 ns
  EXPECT_EQ(InterferenceKind(5, 5), "run_queue_delay");
  EXPECT_EQ(InterferenceKind(4, 5), "interrupted");
}

TEST(NicTroubleCore, RatesAtTheirThresholdsAndJustUnder) {
  const NicTroubleRule rule = NicTroubleRule::From(Thresholds());
  EXPECT_DOUBLE_EQ(PerSecond(50, 500 * kMs), 100);
  EXPECT_TRUE(rule.FullBudgetRateReached(PerSecond(100, 1000 * kMs)));
  EXPECT_FALSE(rule.FullBudgetRateReached(PerSecond(99, 1000 * kMs)));
  EXPECT_TRUE(rule.DropRateReached(100));
  EXPECT_FALSE(rule.DropRateReached(99.9));
  EXPECT_TRUE(rule.IrqOverlapReached(100, 0.005));
  EXPECT_FALSE(rule.IrqOverlapReached(99, 0.5));
  EXPECT_FALSE(rule.IrqOverlapReached(1000, 0.0049));
  EXPECT_TRUE(NicTroubleRule::AnyEvent(1));
  EXPECT_FALSE(NicTroubleRule::AnyEvent(0));
}

TEST(NicTroubleCore, FindingsNameTheirCulpritsAsBothModesDo) {
  EXPECT_EQ(NicTroubleFinding(nic_kind::kTxTimeout, "eth0").culprit, "eth0");
  EXPECT_EQ(NicTroubleFinding(nic_kind::kDqlStall, "").culprit, "network stack");
  Finding d = DropsFinding("eth0", "SOCKET_RCVBUFF");
  EXPECT_EQ(d.detector, "nic_trouble");
  EXPECT_EQ(d.kind, "drops");
  EXPECT_EQ(d.culprit, "eth0 (SOCKET_RCVBUFF)");
  Finding k = KernelHealthFinding();
  EXPECT_EQ(k.kind, "kernel_health");
  EXPECT_EQ(k.culprit, "kernel");
  EXPECT_EQ(k.culprit_kind, "kernel");
}

}  // namespace
}  // namespace gpunoise::analyze
