#include "doctor/locality_checks.h"

#include "doctor/check_test_util.h"

namespace gpunoise::doctor::testing {
namespace {

// Moves the NIC to socket 1: its own host bridge, node 1.
void MoveNicToNode1(FixtureTree& tree) {
  tree.Remove("/sys/bus/pci/devices/0000:04:00.0");
  tree.Remove("/sys/class/net/gnfix0");
  tree.Remove("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0");
  std::string dir = tree.AddPci({.bdf = "0000:84:00.0",
                                 .parent = "pci0000:80/0000:80:01.0",
                                 .class_code = 0x020000,
                                 .vendor = 0x15b3,
                                 .numa_node = 1,
                                 .local_cpus = "4-7",
                                 .irqs = {110, 111},
                                 .driver = "mlx5_core"});
  tree.AddNic({.name = kNic, .ifindex = kNicIfindex, .device_path = dir, .speed = 100000, .mtu = 9000,
               .driver = "mlx5_core"});
}

TEST(DeviceLocality, OkWhenGpuAndNicShareAPcieSwitch) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "locality.devices");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "1 GPU(s) share a PCIe switch with a NIC");
  ASSERT_FALSE(r.details.empty());
  EXPECT_EQ(r.details[0],
            "GPU 0000:03:00.0: node 0, local CPUs 0-3; nearest NIC gnfix0 (0000:04:00.0): same PCIe switch "
            "(PIX/PXB, GPUDirect-friendly)");
  EXPECT_EQ(ExitFor(r), 0);
}

TEST(DeviceLocality, WarnsWhenTheGpusNodeHasNoNic) {
  FixtureTree tree;
  BuildGoodNode(tree);
  MoveNicToNode1(tree);
  CheckResult r = Check(tree, "locality.devices");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "GPU 0000:03:00.0 (node 0) has no NIC on its NUMA node; nearest gnfix0 (0000:84:00.0) (node 1)");
  EXPECT_TRUE(Contains(r.details[0], "across NUMA nodes (SYS)")) << r.details[0];
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(DeviceLocality, WarnsWhenFirmwareGivesAGpuNoNumaNodeOnAMultiNodeMachine) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Write("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/numa_node", "-1\n");
  CheckResult r = Check(tree, "locality.devices");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "GPU 0000:03:00.0 has no NUMA node in sysfs");
}

TEST(DeviceLocality, UnknownWithoutGpusButListsNics) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Write("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/vendor", "0x1002\n");
  CheckResult r = Check(tree, "locality.devices");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "no NVIDIA GPU");
  EXPECT_SAW(r, "gnfix0 (0000:04:00.0): node 0, local CPUs 0-3");
}

TEST(PciDistance, FollowsNvidiaTopoLevels) {
  PciDevice gpu{.bdf = "0000:03:00.0", .host_bridge = "pci0000:00", .bridges = {"0000:00:01.0", "0000:01:00.0"},
                .numa_node = 0};
  PciDevice same_switch{.bdf = "0000:04:00.0", .host_bridge = "pci0000:00",
                        .bridges = {"0000:00:01.0", "0000:01:00.0", "0000:02:01.0"}, .numa_node = 0};
  PciDevice same_host_bridge{.bdf = "0000:05:00.0", .host_bridge = "pci0000:00", .bridges = {"0000:00:02.0"},
                             .numa_node = 0};
  PciDevice same_node{.bdf = "0000:45:00.0", .host_bridge = "pci0000:40", .bridges = {"0000:40:01.0"}, .numa_node = 0};
  PciDevice other_node{.bdf = "0000:85:00.0", .host_bridge = "pci0000:80", .bridges = {"0000:80:01.0"},
                       .numa_node = 1};
  EXPECT_EQ(DistanceBetween(gpu, same_switch, false), PciDistance::kSwitch);
  EXPECT_EQ(DistanceBetween(gpu, same_host_bridge, false), PciDistance::kHostBridge);
  EXPECT_EQ(DistanceBetween(gpu, same_node, false), PciDistance::kNumaNode);
  EXPECT_EQ(DistanceBetween(gpu, other_node, false), PciDistance::kSystem);
  EXPECT_EQ(DistanceBetween(gpu, other_node, true), PciDistance::kNumaNode);
}

TEST(ProcessLocality, OkWhenTheGpuProcessRunsAndAllocatesOnItsGpusNode) {
  FixtureTree tree;
  BuildGoodNode(tree);
  CheckResult r = Check(tree, "locality.processes");
  EXPECT_EQ(r.verdict, Verdict::kOk);
  EXPECT_SAW(r, "1 GPU process(es) run and allocate on their GPUs' NUMA nodes");
  EXPECT_EQ(r.details.at(0),
            "pid 500 (python): GPU 0000:03:00.0 on node 0, CPUs on node 0, 100% of 267144 resident pages local");
}

TEST(ProcessLocality, WarnsWhenTheProcessMayOnlyRunOnTheOtherNode) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.AddProcess({.pid = 500, .ppid = 300, .comm = "python", .cpus = "6-7", .fd_targets = {"/dev/nvidia0"},
                   .numa_maps = "7f0000000000 default anon=10 N0=10 kernelpagesize_kB=4\n"});
  CheckResult r = Check(tree, "locality.processes");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "pid 500 (python) uses GPU 0000:03:00.0 on node 0 but may only run on node 1");
  EXPECT_TRUE(Contains(r.fix, "numactl --cpunodebind=0 --membind=0")) << r.fix;
  EXPECT_EQ(ExitFor(r), 1);
}

TEST(ProcessLocality, WarnsWhenTheProcessMayRunOnBothNodes) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.AddProcess({.pid = 500, .ppid = 300, .comm = "python", .cpus = "0-7", .fd_targets = {"/dev/nvidia0"}});
  CheckResult r = Check(tree, "locality.processes");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "but may run on nodes 0-1");
}

TEST(ProcessLocality, WarnsForMemoryOnTheOtherNodeOrABindPolicyThere) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.AddProcess({.pid = 500, .ppid = 300, .comm = "python", .cpus = "2-3", .fd_targets = {"/dev/nvidia0"},
                   .numa_maps = "7f0000000000 default anon=9000 N0=1000 N1=8000 kernelpagesize_kB=4\n"});
  CheckResult r = Check(tree, "locality.processes");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "pid 500 (python): 89% of its resident memory is off node 0");

  tree.AddProcess({.pid = 500, .ppid = 300, .comm = "python", .cpus = "2-3", .fd_targets = {"/dev/nvidia0"},
                   .numa_maps = "7f0000000000 bind:1 anon=10 N1=10 kernelpagesize_kB=4\n"});
  r = Check(tree, "locality.processes");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "has memory policy bind:1 away from GPU 0000:03:00.0 on node 0");
}

TEST(ProcessLocality, FindsGpuUseThroughMapsToo) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.AddProcess({.pid = 500, .ppid = 300, .comm = "python", .cpus = "6-7",
                   .maps = "7f00-7f10 rw-s 00000000 00:05 12   /dev/nvidia0\n"});
  CheckResult r = Check(tree, "locality.processes");
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_SAW(r, "pid 500 (python) uses GPU 0000:03:00.0 on node 0");
}

TEST(ProcessLocality, UnknownWithoutGpuProcesses) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.Remove("/proc/500");
  CheckResult r = Check(tree, "locality.processes");
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
  EXPECT_SAW(r, "no process uses a GPU");
}

}  // namespace
}  // namespace gpunoise::doctor::testing
