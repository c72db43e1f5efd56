#include "collect/numa_topology.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace gpunoise::collect {
namespace {

namespace fs = std::filesystem;

// A sysfs tree in a temporary directory, removed at the end; links are
// relative, as the kernel makes them.
class FakeSys {
 public:
  FakeSys() {
    char tmpl[] = "/tmp/gpunoise-sys-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  ~FakeSys() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void Write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(root_ + "/" + path).parent_path());
    std::ofstream(root_ + "/" + path) << text;
  }
  void Link(const std::string& path, const std::string& target) {
    fs::create_directories(fs::path(root_ + "/" + path).parent_path());
    fs::create_directory_symlink(target, root_ + "/" + path);
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// Two nodes; eth0 a PCI NIC on node 1; eth1 a virtio NIC whose PCI function
// reports -1; lo with no device; an NVIDIA 3D controller on node 0 and a
// VGA device of another vendor.
void TwoNodeTree(FakeSys& sys) {
  sys.Write("devices/system/node/node0/cpulist", "0-3\n");
  sys.Write("devices/system/node/node1/cpulist", "4-7\n");
  sys.Write("devices/system/node/online", "0-1\n");
  sys.Write("devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0/numa_node", "1\n");
  sys.Write("devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0/class", "0x020000\n");
  sys.Write("devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0/net/eth0/ifindex", "2\n");
  sys.Link("class/net/eth0", "../../devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0/net/eth0");
  sys.Link("devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0/net/eth0/device", "../../../0000:5e:00.0");
  sys.Write("devices/pci0000:00/0000:00:03.0/numa_node", "-1\n");
  sys.Write("devices/pci0000:00/0000:00:03.0/virtio2/net/eth1/ifindex", "3\n");
  sys.Link("class/net/eth1", "../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth1");
  sys.Link("devices/pci0000:00/0000:00:03.0/virtio2/net/eth1/device", "../../../virtio2");
  sys.Write("devices/virtual/net/lo/ifindex", "1\n");
  sys.Link("class/net/lo", "../../devices/virtual/net/lo");
  sys.Write("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/class", "0x030200\n");
  sys.Write("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/vendor", "0x10de\n");
  sys.Write("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/numa_node", "0\n");
  sys.Link("bus/pci/devices/0000:3b:00.0", "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0");
  sys.Write("devices/pci0000:00/0000:00:02.0/class", "0x030000\n");
  sys.Write("devices/pci0000:00/0000:00:02.0/vendor", "0x1234\n");
  sys.Write("devices/pci0000:00/0000:00:02.0/numa_node", "-1\n");
  sys.Link("bus/pci/devices/0000:00:02.0", "../../../devices/pci0000:00/0000:00:02.0");
  sys.Link("bus/pci/devices/0000:5e:00.0", "../../../devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0");
}

const model::NumaDevice* Find(const model::NumaTopology& t, std::string_view name) {
  for (const auto& d : t.devices)
    if (d.name == name) return &d;
  return nullptr;
}

TEST(NumaTopology, ReadsNodesNicsAndGpusFromASysfsTree) {
  FakeSys sys;
  TwoNodeTree(sys);
  model::NumaTopology t = ReadNumaTopology(sys.root());
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.nodes[0].node, 0);
  EXPECT_EQ(t.nodes[0].cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t.nodes[1].node, 1);
  EXPECT_EQ(t.nodes[1].cpus, (std::vector<int>{4, 5, 6, 7}));

  const model::NumaDevice* eth0 = Find(t, "eth0");
  ASSERT_NE(eth0, nullptr);
  EXPECT_EQ(eth0->kind, "nic");
  EXPECT_EQ(eth0->bus_id, "0000:5e:00.0");
  EXPECT_EQ(eth0->numa_node, 1);
  // A virtio NIC: its PCI function is the device's parent.
  const model::NumaDevice* eth1 = Find(t, "eth1");
  ASSERT_NE(eth1, nullptr);
  EXPECT_EQ(eth1->bus_id, "0000:00:03.0");
  EXPECT_EQ(eth1->numa_node, -1);
  EXPECT_EQ(Find(t, "lo"), nullptr);

  const model::NumaDevice* gpu = Find(t, "0000:3b:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->kind, "gpu");
  EXPECT_EQ(gpu->numa_node, 0);
  // Only NVIDIA display controllers are GPUs, and the NIC is no GPU.
  EXPECT_EQ(Find(t, "0000:00:02.0"), nullptr);
  EXPECT_EQ(t.devices.size(), 3u);
}

TEST(NumaTopology, AMissingTreeGivesNothing) {
  model::NumaTopology t = ReadNumaTopology("/nonexistent-gpunoise-sys");
  EXPECT_TRUE(t.nodes.empty());
  EXPECT_TRUE(t.devices.empty());
}

TEST(NumaTopology, NvmlAndSysfsBusIdsNormalizeAlike) {
  EXPECT_EQ(model::NormalizePciBusId("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(model::NormalizePciBusId("0000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(model::NormalizePciBusId("10000:3b:00.0"), "10000:3b:00.0");  // a VMD domain keeps its digits
  EXPECT_EQ(model::NormalizePciBusId("virtio2"), "");
  EXPECT_EQ(model::NormalizePciBusId("0000:3g:00.0"), "");
}

TEST(NumaTopology, NicIrqCpusAreTheEffectiveAffinityElseTheAllowedMask) {
  model::IrqTable irqs;
  irqs[38] = {38, "virtio2-input.0", "eth1", 0, "rx", {0, 1}, {1}};
  irqs[39] = {39, "virtio2-output.0", "eth1", 0, "tx", {0, 1}, {}};
  irqs[0] = {0, "timer", "", -1, "", {0}, {0}};
  auto got = NicIrqAffinities(irqs);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].irq, 38);
  EXPECT_EQ(got[0].cpus, std::vector<int>{1});
  EXPECT_TRUE(got[0].effective);
  EXPECT_EQ(got[1].cpus, (std::vector<int>{0, 1}));
  EXPECT_FALSE(got[1].effective);
}

}  // namespace
}  // namespace gpunoise::collect
