#include "monitor/kernel_log_triggers.h"

#include <gtest/gtest.h>

namespace gpunoise::monitor {
namespace {

model::KernelLogEntry Entry(const std::string& text, const std::string& device = "") {
  model::KernelLogEntry e;
  e.text = text;
  model::KernelLogMatch m = model::ClassifyKernelLog(text);
  e.cls = m.cls;
  e.about = !device.empty() ? device : m.device;
  return e;
}

TEST(KernelLogTriggers, SevereClassesTriggerAndOthersDoNot) {
  using C = model::KernelLogClass;
  for (C c : {C::kTxTimeout, C::kNicReset, C::kSoftLockup, C::kHardLockup, C::kRcuStall, C::kHungTask, C::kMachineCheck})
    EXPECT_TRUE(TriggersFlightRecorder(c)) << model::KernelLogClassName(c);
  for (C c : {C::kNone, C::kLinkUp, C::kLinkDown, C::kPcieAer, C::kThermal, C::kPageAllocFailure})
    EXPECT_FALSE(TriggersFlightRecorder(c)) << model::KernelLogClassName(c);
}

TEST(KernelLogTriggers, OneObservationPerClassAndDeviceQuotingTheFirstMessage) {
  std::vector<model::KernelLogEntry> log = {
      Entry("NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out 5120 ms"),
      Entry("NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 4 timed out 5120 ms"),
      Entry("mlx5_core 0000:3b:00.0 eth0: Link up"),
      Entry("watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [python3:4242]"),
  };
  auto obs = KernelLogObservations(log);
  ASSERT_EQ(obs.size(), 2u);
  const Observation* tx = obs[0].what.kind == "tx_timeout" ? &obs[0] : &obs[1];
  const Observation* lockup = tx == &obs[0] ? &obs[1] : &obs[0];
  EXPECT_EQ(tx->what.detector, "kernel_log");
  EXPECT_EQ(tx->what.device, "eth0");
  ASSERT_EQ(tx->evidence.size(), 2u);
  EXPECT_NE(tx->evidence[0].find("transmit queue 3 timed out"), std::string::npos);
  EXPECT_NE(tx->evidence[1].find("1 more"), std::string::npos);
  EXPECT_EQ(lockup->what.kind, "soft_lockup");
  EXPECT_EQ(lockup->what.cpu, 3);
  EXPECT_EQ(lockup->what.culprit, "python3");
}

TEST(KernelLogTriggers, ARepeatedMessageIsOneEpisode) {
  // The same watchdog line in consecutive intervals: one episode started,
  // so one dump request (the flight recorder rate-limits further).
  FindingTracker tracker;
  std::vector<model::KernelLogEntry> log = {Entry("NETDEV WATCHDOG: eth0 (x): transmit queue 0 timed out 5000 ms")};
  auto c = tracker.Observe(KernelLogObservations(log), 0, 10);
  EXPECT_EQ(c.started.size(), 1u);
  c = tracker.Observe(KernelLogObservations(log), 10, 20);
  EXPECT_TRUE(c.started.empty());
}

}  // namespace
}  // namespace gpunoise::monitor
