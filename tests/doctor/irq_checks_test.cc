#include "doctor/irq_checks.h"

#include "doctor/check_test_util.h"

namespace gpunoise::doctor::testing {
namespace {

TEST(IrqPlacement, OkWhenDeviceIrqsStayOffFocusCpus) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "irq.placement");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "none on focus CPUs 2-3");
  EXPECT_EQ(ExitFor(r), 0);
}

TEST(IrqPlacement, WarnsForANicIrqOnAFocusCpu) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.AddIrq(110, "mlx5_comp0@pci:0000:04:00.0", "3", "0-7");
  CheckResult r = Check(tree, "irq.placement");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "1 of 5 device IRQs run on focus CPUs 2-3: gnfix0 (1 IRQ)");
  ASSERT_EQ(r.details.size(), 1u);
  EXPECT_EQ(r.details[0], "gnfix0 IRQ 110 (mlx5_comp0@pci:0000:04:00.0) on CPU 3");
  EXPECT_TRUE(Contains(r.fix, "for irq in 110; do echo 0-1,4-7 > /proc/irq/$irq/smp_affinity_list")) << r.fix;
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(IrqPlacement, WarnsForGpuIrqsToo) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.AddIrq(100, "nvidia", "2", "0-7");
  CheckResult r = Check(tree, "irq.placement");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "GPU 0000:03:00.0 (1 IRQ)");
}

TEST(IrqPlacement, NvmeQueueIrqServingOnlyFocusCpusIsByDesign) {
  FixtureTree tree;
  BuildGoodNode(tree);
  // IRQ 120 is on CPU 2 but only CPU 2 submits to its queue (good node);
  // IRQ 121 serves CPUs 0-3, so housekeeping CPUs' I/O completes on CPU 3.
  tree.AddIrq(121, "nvme0q2", "3", "0-3");
  CheckResult r = Check(tree, "irq.placement");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  ASSERT_EQ(r.details.size(), 1u);
  EXPECT_EQ(r.details[0], "NVMe 0000:05:00.0 IRQ 121 (nvme0q2) on CPU 3");
}

TEST(IrqPlacement, FallsBackToTheAllowedMaskWithoutEffectiveAffinity) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Remove("/proc/irq/111/effective_affinity_list");
  tree.Write("/proc/irq/111/smp_affinity_list", "1-2\n");
  CheckResult r = Check(tree, "irq.placement");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_EQ(r.details.at(0), "gnfix0 IRQ 111 (mlx5_comp1@pci:0000:04:00.0) on CPU 1-2");
}

TEST(IrqPlacement, UnknownWithoutFocusOrDevices) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Remove("/proc/500");
  tree.Remove("/proc/501");
  tree.SetCmdline("BOOT_IMAGE=/vmlinuz");
  tree.Remove("/sys/devices/system/cpu/nohz_full");
  CheckResult r = Check(tree, "irq.placement");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "no focus CPUs");
  EXPECT_EQ(ExitFor(r), 0);

  FixtureTree bare;
  bare.SetCpus(4, 1);
  DoctorOptions options;
  options.focus.cpus = {2, 3};
  r = Check(bare, "irq.placement", {}, options);
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "no NIC, NVMe or GPU with IRQs");
}

TEST(IrqBalance, OkWhenNotRunning) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "irq.irqbalance");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "not running");
}

TEST(IrqBalance, WarnsWhenRunningWithFocusCpusNotBanned) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.SetCmdline("BOOT_IMAGE=/vmlinuz");  // no nohz_full: irqbalance would not skip 2-3 on its own
  tree.Remove("/sys/devices/system/cpu/nohz_full");
  tree.AddProcess({.pid = 400, .comm = "irqbalance", .cpus = "0-7", .environ = std::string("PATH=/bin\0", 10)});
  CheckResult r = Check(tree, "irq.irqbalance");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "irqbalance (pid 400) may move IRQs onto focus CPUs 2-3 (banned or isolated: none)");
  EXPECT_TRUE(Contains(r.fix, "IRQBALANCE_BANNED_CPULIST=2-3")) << r.fix;
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(IrqBalance, OkWhenFocusCpusAreBannedInItsEnvironmentOrConfig) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.SetCmdline("BOOT_IMAGE=/vmlinuz");
  tree.Remove("/sys/devices/system/cpu/nohz_full");
  std::string env = std::string("PATH=/bin\0IRQBALANCE_BANNED_CPULIST=2-3\0", 40);
  tree.AddProcess({.pid = 400, .comm = "irqbalance", .cpus = "0-7", .environ = env});
  CheckResult r = Check(tree, "irq.irqbalance");
  EXPECT_EQ(r.verdict, Verdict::kOk) << r.saw;
  EXPECT_SAW(r, "keeps off focus CPUs 2-3");

  tree.AddProcess({.pid = 400, .comm = "irqbalance", .cpus = "0-7", .environ = ""});
  tree.Write("/etc/default/irqbalance", "# banned\nIRQBALANCE_BANNED_CPUS=\"0000000c\"\n");
  r = Check(tree, "irq.irqbalance");
  EXPECT_EQ(r.verdict, Verdict::kOk) << r.saw;
  EXPECT_SAW(r, "banned or isolated: 2-3");
}

TEST(IrqBalance, IsolatedCpusCountAsBanned) {
  FixtureTree tree;
  BuildGoodNode(tree);  // nohz_full=2-3,6-7
  tree.AddProcess({.pid = 400, .comm = "irqbalance", .cpus = "0-7"});
  CheckResult r = Check(tree, "irq.irqbalance");
  EXPECT_EQ(r.verdict, Verdict::kOk) << r.saw;
  EXPECT_SAW(r, "banned or isolated: 2-3,6-7");
}

TEST(PacketSteering, OkWhenRpsAndRfsAreOff) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "irq.steering");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "gnfix0: RPS off (0 of 2 rx queues), RFS off, XPS on 2 of 2 tx queues");
}

TEST(PacketSteering, WarnsForRpsOntoFocusCpus) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Write("/sys/class/net/gnfix0/queues/rx-1/rps_cpus", "0c\n");
  CheckResult r = Check(tree, "irq.steering");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "gnfix0 rx-1 RPS to CPUs 2-3");
  EXPECT_TRUE(Contains(r.fix, "echo 0 > /sys/class/net/gnfix0/queues/rx-1/rps_cpus")) << r.fix;
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(PacketSteering, RpsOnHousekeepingCpusIsFine) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Write("/sys/class/net/gnfix0/queues/rx-1/rps_cpus", "03\n");
  CheckResult r = Check(tree, "irq.steering");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "RPS to CPUs 0-1 (1 of 2 rx queues)");
}

TEST(PacketSteering, WarnsForRfs) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Write("/proc/sys/net/core/rps_sock_flow_entries", "32768\n");
  tree.Write("/sys/class/net/gnfix0/queues/rx-0/rps_flow_cnt", "4096\n");
  CheckResult r = Check(tree, "irq.steering");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "RFS on (net.core.rps_sock_flow_entries=32768)");
  EXPECT_TRUE(Contains(r.fix, "sysctl -w net.core.rps_sock_flow_entries=0"));
}

TEST(PacketSteering, UnknownWithoutAPhysicalNic) {
  FixtureTree tree;
  tree.AddNic({.name = "veth0", .ifindex = 7});
  CheckResult r = Check(tree, "irq.steering");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "no physical NIC");
}

}  // namespace
}  // namespace gpunoise::doctor::testing
