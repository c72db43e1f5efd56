#include "doctor/kernel_checks.h"

#include "doctor/check_test_util.h"

namespace gpunoise::doctor::testing {
namespace {

TEST(KernelLogLines, ClassifiesKnownTrouble) {
  auto f = ClassifyKernelLogLine("NETDEV WATCHDOG: eth2 (mlx5_core): transmit queue 3 timed out 5120 ms");
  EXPECT_EQ(f.kind, LogTrouble::kTxTimeout);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  f = ClassifyKernelLogLine("NVRM: Xid (PCI:0000:17:00): 79, pid=1234, name=python, GPU has fallen off the bus.");
  EXPECT_EQ(f.kind, LogTrouble::kXid);
  EXPECT_EQ(f.xid, 79);
  EXPECT_EQ(f.verdict, Verdict::kFail);
  f = ClassifyKernelLogLine("NVRM: Xid (PCI:0000:17:00): 13, pid='<unknown>', Graphics Exception");
  EXPECT_EQ(f.xid, 13);
  EXPECT_EQ(f.verdict, Verdict::kWarn);
  EXPECT_EQ(ClassifyKernelLogLine("rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:").kind, LogTrouble::kRcuStall);
  EXPECT_EQ(ClassifyKernelLogLine("watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [python:999]").kind,
            LogTrouble::kSoftLockup);
  EXPECT_EQ(ClassifyKernelLogLine("INFO: task kworker/3:1:123 blocked for more than 122 seconds.").kind,
            LogTrouble::kHungTask);
  EXPECT_EQ(ClassifyKernelLogLine("mlx5_core 0000:04:00.0: Link up").kind, LogTrouble::kNone);
}

TEST(KernelLogLines, ParsesKmsgRecords) {
  auto r = ParseKmsgRecord("4,812,123456789,-;NETDEV WATCHDOG: eth0: transmit queue 0 timed out");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->priority, 4);
  EXPECT_EQ(r->usec, 123456789u);
  EXPECT_EQ(r->text, "NETDEV WATCHDOG: eth0: transmit queue 0 timed out");
  EXPECT_FALSE(ParseKmsgRecord(" SUBSYSTEM=pci"));
}

TEST(KernelCounters, OkWhenAllZero) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "kernel.counters");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_EQ(r.saw, "since boot: softlockup 0, hardlockup 0, rcu_stall 0, warn 0, oops 0");
}

TEST(KernelCounters, WarnsForWarningsAndFailsForAnOops) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Write("/sys/kernel/warn_count", "2\n");
  CheckResult r = Check(tree, "kernel.counters");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "warn 2");
  EXPECT_EQ(ExitFor(r), 1);
  tree.Write("/sys/kernel/oops_count", "1\n");
  r = Check(tree, "kernel.counters");
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_SAW(r, "oops 1");
  EXPECT_EQ(ExitFor(r), 2);
}

TEST(KernelCounters, FailsWhenALockupCounterGrowsWhileSampling) {
  FixtureTree tree;
  BuildGoodNode(tree);
  FakeSources fakes;
  fakes.between_samples = [&] { tree.Write("/sys/kernel/softlockup_count", "1\n"); };
  CheckResult r = Check(tree, "kernel.counters", fakes);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_SAW(r, "softlockup 1 (+1 now)");
}

TEST(KernelCounters, UnknownOnOlderKernels) {
  FixtureTree tree;
  BuildGoodNode(tree);
  for (const auto& name : KernelCounterNames()) tree.Remove("/sys/kernel/" + name);
  CheckResult r = Check(tree, "kernel.counters");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "no /sys/kernel/*_count files");
}

TEST(HungTasks, WarnsForDetectedHungTasksOrTheirLogLines) {
  FixtureTree tree;
  BuildGoodNode(tree);
  EXPECT_EQ(Check(tree, "kernel.hung_tasks").verdict, Verdict::kOk);
  tree.Write("/proc/sys/kernel/hung_task_detect_count", "3\n");
  CheckResult r = Check(tree, "kernel.hung_tasks");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "hung_task_detect_count 3 (timeout 120 s)");
  EXPECT_EQ(ExitFor(r), 1);

  tree.Remove("/proc/sys/kernel/hung_task_detect_count");
  tree.SetKernelLog({"3,10,9000000,-;INFO: task nfsd:77 blocked for more than 122 seconds."});
  r = Check(tree, "kernel.hung_tasks");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "1 'blocked for more than' kernel log records");
}

TEST(KernelLog, OkWithoutKnownTrouble) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "kernel.log");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "3 kernel log records; none names");
}

TEST(KernelLog, NamesTransmitTimeoutsXidsAndStalls) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.SetKernelLog({
      "6,1,1000,-;Command line: quiet",
      "4,2,2000000,-;NETDEV WATCHDOG: gnfix0 (mlx5_core): transmit queue 1 timed out 5120 ms",
      " SUBSYSTEM=net",
      " DEVICE=n4242",
      "3,3,3000000,-;rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
  });
  CheckResult r = Check(tree, "kernel.log");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "1 NETDEV WATCHDOG transmit timeout, 1 RCU stall in 3 kernel log records");
  EXPECT_EQ(r.details.size(), 2u);
  EXPECT_EQ(ExitFor(r), 1);

  tree.SetKernelLog({"4,9,4000000,-;NVRM: Xid (PCI:0000:03:00): 79, pid=500, name=python, GPU has fallen off the bus."});
  r = Check(tree, "kernel.log");
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_SAW(r, "1 NVIDIA Xid (79 x1)");
  EXPECT_EQ(ExitFor(r), 2);
}

TEST(KernelLog, LogSinceIgnoresOlderRecords) {
  FixtureTree tree;
  BuildGoodNode(tree);  // uptime 10000 s
  tree.SetKernelLog({"4,2,2000000,-;NETDEV WATCHDOG: gnfix0 (mlx5_core): transmit queue 1 timed out 5120 ms",
                     "6,3,9999000000,-;all fine"});
  DoctorOptions options;
  options.log_since_ns = 3600ull * 1'000'000'000;
  CheckResult r = Check(tree, "kernel.log", {}, options);
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "1 kernel log records from the last 3600 s");
}

TEST(KernelLog, UnknownWhenUnreadable) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Remove("/dev/kmsg");
  CheckResult r = Check(tree, "kernel.log");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "kernel log unreadable: failed to open");
}

}  // namespace
}  // namespace gpunoise::doctor::testing
