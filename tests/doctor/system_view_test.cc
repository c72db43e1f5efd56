// Reading through a root directory: paths, link resolution inside the root,
// the kernel log, and the inventory parsed from a fixture.
#include "doctor/system_view.h"

#include <gtest/gtest.h>

#include "doctor/good_node.h"
#include "doctor/inventory.h"
#include "doctor/processes.h"

namespace gpunoise::doctor::testing {
namespace {

TEST(SystemView, ResolvesRelativeAndAbsoluteLinksInsideTheRoot) {
  FixtureTree tree;
  tree.Write("/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/mtu", "1500\n");
  tree.Symlink("/sys/class/net/eth0", "../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0");
  tree.Symlink("/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/device", "../../../virtio2");
  tree.Symlink("/abs", "/sys/class/net");  // absolute: must stay inside the root
  SystemView view(tree.root() + "/");
  EXPECT_EQ(view.root(), tree.root());
  EXPECT_FALSE(view.IsLive());
  auto dev = view.Resolve("/sys/class/net/eth0/device");
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  EXPECT_EQ(*dev, "/sys/devices/pci0000:00/0000:00:03.0/virtio2");
  EXPECT_EQ(*view.Resolve("/abs/eth0"), "/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0");
  EXPECT_EQ(view.ReadInt("/abs/eth0/mtu"), 1500);
  tree.Symlink("/loop", "/loop");
  EXPECT_FALSE(view.Resolve("/loop/x").ok());
}

TEST(SystemView, KernelLogSkipsDictionaryLines) {
  FixtureTree tree;
  tree.Write("/dev/kmsg", "6,1,10,-;first\n SUBSYSTEM=pci\n DEVICE=+pci:0000:00:03.0\n4,2,20,-;second\n");
  SystemView view(tree.root());
  auto log = view.ReadKernelLog();
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(*log, (std::vector<std::string>{"6,1,10,-;first", "4,2,20,-;second"}));
}

TEST(SystemView, LiveRootIsSlash) {
  SystemView view("/");
  EXPECT_TRUE(view.IsLive());
  EXPECT_EQ(view.HostPath("/proc/cmdline"), "/proc/cmdline");
  EXPECT_TRUE(view.Exists("/proc/self/status"));
}

TEST(Inventory, ClassifiesPciDevicesAndFindsTheirPlace) {
  FixtureTree tree;
  BuildGoodNode(tree);
  SystemView view(tree.root());
  Inventory inv = ReadInventory(view);
  const PciDevice* gpu = inv.FindPci(kGpuBdf);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->kind, PciKind::kGpu);
  EXPECT_EQ(gpu->host_bridge, "pci0000:00");
  EXPECT_EQ(gpu->bridges, (std::vector<std::string>{"0000:00:01.0", "0000:01:00.0", "0000:02:00.0"}));
  EXPECT_EQ(gpu->numa_node, 0);
  EXPECT_EQ(gpu->irqs, (std::vector<int>{100}));
  EXPECT_EQ(gpu->driver, "nvidia");
  ASSERT_TRUE(gpu->link);
  EXPECT_EQ(gpu->link->max_width, 16);
  EXPECT_EQ(inv.FindPci("0000:05:00.0")->kind, PciKind::kNvme);
  auto nics = inv.PhysicalNics();
  ASSERT_EQ(nics.size(), 1u);
  EXPECT_EQ(nics[0]->name, kNic);
  EXPECT_EQ(nics[0]->pci_bdf, kNicBdf);
  EXPECT_EQ(nics[0]->driver, "mlx5_core");
  EXPECT_EQ(nics[0]->rx_queues, (std::vector<std::string>{"rx-0", "rx-1"}));
  EXPECT_EQ(inv.irq_names.at(110), "mlx5_comp0@pci:0000:04:00.0");
  EXPECT_EQ(inv.NodeOfCpu(5), 1);
  EXPECT_TRUE(LooksLikePciAddress("10000:00:02.0"));
  EXPECT_FALSE(LooksLikePciAddress("pci0000:00"));
}

TEST(Processes, ReadsCommAffinityKthreadFlagAndGpuFiles) {
  FixtureTree tree;
  BuildGoodNode(tree);
  tree.AddProcess({.pid = 900, .ppid = 1, .comm = "odd (name) x", .cpus = "1,3"});
  SystemView view(tree.root());
  auto procs = ReadProcesses(view);
  auto find = [&](int pid) {
    for (const auto& p : procs)
      if (p.pid == pid) return p;
    return ProcessInfo{};
  };
  EXPECT_EQ(find(900).comm, "odd (name) x");
  EXPECT_EQ(find(900).cpus_allowed, (std::vector<int>{1, 3}));
  EXPECT_TRUE(find(12).kernel_thread);
  EXPECT_FALSE(find(1).kernel_thread);
  EXPECT_EQ(find(500).GpuMinors(), (std::vector<int>{0}));
  EXPECT_TRUE(find(500).UsesGpu());
  EXPECT_FALSE(find(501).UsesGpu());
  EXPECT_EQ(ReadNvidiaMinors(view).at(0), kGpuBdf);
  NumaMemory m = ParseNumaMaps("7f00 interleave:0-1 anon=4 N0=2 N1=2 kernelpagesize_kB=4\n");
  EXPECT_EQ(m.pages_per_node.at(1), 2u);
  EXPECT_TRUE(m.policies.count("interleave:0-1"));
}

}  // namespace
}  // namespace gpunoise::doctor::testing
