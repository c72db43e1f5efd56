#include "analyze/nic_trouble_detector.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100;

Synth Base() {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.IrqName(45, "eth0-TxRx-1").IrqName(46, "nvme0q1");
  s.Switch(kBase, 1, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 1, kFocus, 0, 1);
  return s;
}

void AddCounter(Synth& s, uint64_t uuid, uint64_t parent, const std::string& name,
                const std::vector<std::pair<uint64_t, double>>& samples) {
  s.builder().OnTrack({uuid, parent, name, 0, 0, true});
  for (const auto& [ts, v] : samples) {
    model::TrackEventRecord c;
    c.ts = ts;
    c.track_uuid = uuid;
    c.type = model::TrackEventType::kCounter;
    c.counter_value = v;
    s.builder().OnTrackEvent(c);
  }
}

TEST(NicTrouble, AQuietNodeHasNone) {
  Synth s = Base();
  for (uint64_t t = kBase; t < kBase + 1000 * kMs; t += 10 * kMs) {
    s.Net(t, 0, model::NetTraceKind::kNapiPoll, "eth0", 3, 64, 0);
    s.Net(t + kUs, 0, model::NetTraceKind::kRxPacket, "eth0", 1500);
  }
  s.PeriodicIrq(0, kBase, kBase + 1000 * kMs, 45, 10 * kMs, 2 * kUs);  // on CPU 0: no focus thread there
  for (uint64_t t = kBase; t < kBase + 1000 * kMs; t += 100 * kMs)
    s.Net(t, 0, model::NetTraceKind::kDrop, "", 0, 0, -1, "NO_SOCKET");  // 10/s
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "nic_trouble").empty());
  const DeviceStats* eth0 = nullptr;
  for (const auto& d : a.devices)
    if (d.device == "eth0") eth0 = &d;
  ASSERT_NE(eth0, nullptr);
  EXPECT_EQ(eth0->rx_packets, 100u);
  EXPECT_EQ(eth0->napi_polls, 100u);
  EXPECT_EQ(eth0->irq_count, 100u);
}

TEST(NicTrouble, TxTimeoutsAreFindingsEvenOnce) {
  Synth s = Base();
  s.Net(kBase + 300 * kMs, 0, model::NetTraceKind::kTxTimeout, "eth1", 0, 0, 5);
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "nic_trouble");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, "tx_timeout");
  EXPECT_EQ(found[0].device, "eth1");
  EXPECT_EQ(found[0].queue, 5);
  EXPECT_EQ(found[0].start, kBase + 300 * kMs);
}

TEST(NicTrouble, TxTimeoutsFromTheCumulativeCounter) {
  Synth s = Base();
  AddCounter(s, 1, 0, "Network", {});
  AddCounter(s, 2, 1, "eth0", {});
  AddCounter(s, 3, 2, "eth0 tx timeouts", {{kBase + 400 * kMs, 2}, {kBase + 500 * kMs, 3}});
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "nic_trouble");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, "tx_timeout");
  EXPECT_EQ(found[0].Metric("count"), 3);
}

TEST(NicTrouble, RepeatedFullBudgetPollsAboveTheRate) {
  Synth s = Base();
  // 500 polls in 0.5 s on CPU 0, 400 of them full: 800/s.
  for (int i = 0; i < 500; ++i)
    s.Net(kBase + i * kMs, 0, model::NetTraceKind::kNapiPoll, "eth0", i % 5 ? 64 : 10, 64, 2);
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "nic_trouble");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, "napi_full_budget");
  EXPECT_EQ(found[0].cpus, std::vector<uint32_t>{0});
  EXPECT_EQ(found[0].Metric("full_budget_polls"), 400);
  EXPECT_EQ(FindingsOf(AnalyzeOrDie(t, {"trainer"}, {"nic.full_budget_rate=1000"}), "nic_trouble").size(), 0u);
}

TEST(NicTrouble, DropsOfOneReasonAboveTheRateFromCounters) {
  Synth s = Base();
  AddCounter(s, 1, 0, "Network", {});
  AddCounter(s, 2, 1, "eth0", {});
  AddCounter(s, 3, 2, "eth0 drops/s SOCKET_RCVBUFF",
             {{kBase, 5000}, {kBase + 100 * kMs, 7000}, {kBase + 200 * kMs, 0}});
  AddCounter(s, 4, 2, "eth0 drops/s NO_SOCKET", {{kBase, 5}, {kBase + 100 * kMs, 0}});
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "nic_trouble");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, "drops");
  EXPECT_NE(found[0].culprit.find("SOCKET_RCVBUFF"), std::string::npos);
  EXPECT_NEAR(found[0].Metric("drops"), 1200, 1);
  EXPECT_EQ(found[0].Metric("peak_rate"), 7000);
}

TEST(NicTrouble, NicInterruptsOnAFocusCpuAreAnAffinityOverlap) {
  Synth s = Base();
  s.PeriodicIrq(1, kBase, kBase + 1000 * kMs, 45, 2 * kMs, 20 * kUs);  // 500 on the focus thread's CPU
  s.PeriodicIrq(1, kBase + 500 * kUs, kBase + 1000 * kMs, 46, 2 * kMs, 20 * kUs);  // storage: not a NIC
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "nic_trouble");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, "irq_affinity_overlap");
  EXPECT_EQ(found[0].device, "eth0");
  EXPECT_EQ(found[0].cpus, std::vector<uint32_t>{1});
  EXPECT_EQ(found[0].Metric("irqs"), 500);
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 500 * 20.0 * kUs, kUs);
}

TEST(NicTrouble, KernelHealthCountersThatRise) {
  Synth s = Base();
  AddCounter(s, 7, 0, "warn_count", {{kBase, 3}, {kBase + 500 * kMs, 3}, {kBase + 900 * kMs, 3}});
  AddCounter(s, 8, 0, "rcu_stall_count", {{kBase, 0}, {kBase + 500 * kMs, 1}});
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "nic_trouble");
  ASSERT_EQ(found.size(), 1u) << "a counter that was already 3 at the start did not rise";
  EXPECT_EQ(found[0].kind, "kernel_health");
  EXPECT_EQ(found[0].start, kBase + 500 * kMs);
}

}  // namespace
}  // namespace gpunoise::analyze
