#include "collect/irq_scanner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpunoise::collect {
namespace {

// A fake /proc or /sys tree, removed with the test.
class FakeRoot {
 public:
  explicit FakeRoot(const char* kind) {
    std::string tmpl = std::string("/tmp/gpunoise-") + kind + "-XXXXXX";
    if (::mkdtemp(tmpl.data())) path_ = tmpl;
  }
  FakeRoot(const FakeRoot&) = delete;
  FakeRoot& operator=(const FakeRoot&) = delete;
  ~FakeRoot() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(IrqScanner, ReadsNamesAndAffinitiesFromAProcTree) {
  FakeRoot proc("proc");
  ASSERT_FALSE(proc.path().empty());
  const std::string& root = proc.path();
  Write(root + "/interrupts",
        "           CPU0       CPU1       \n"
        "  0:         10          0   IO-APIC   2-edge      timer\n"
        " 38:          0        711 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
        " 90:          5          6 PCI-MSIX-0000:3b:00.0   12-edge      mlx5_comp12@pci:0000:3b:00.0\n"
        "NMI:          0          0   Non-maskable interrupts\n"
        "LOC:     102030     203040   Local timer interrupts\n");
  ::mkdir((root + "/irq").c_str(), 0755);
  ::mkdir((root + "/irq/38").c_str(), 0755);
  Write(root + "/irq/38/smp_affinity_list", "0-1\n");
  Write(root + "/irq/38/effective_affinity_list", "1\n");

  model::IrqTable t = ScanIrqs(root);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "timer");
  EXPECT_EQ(t[38].name, "virtio2-input.0");
  EXPECT_EQ(t[38].affinity, (std::vector<int>{0, 1}));
  EXPECT_EQ(t[38].effective_affinity, (std::vector<int>{1}));
  EXPECT_EQ(t[90].name, "mlx5_comp12@pci:0000:3b:00.0");
  EXPECT_TRUE(t[90].affinity.empty());
}

TEST(IrqScanner, MissingProcGivesAnEmptyTable) {
  EXPECT_TRUE(ScanIrqs("/nonexistent").empty());
}

TEST(IrqScanner, MapNicIrqsUsesMsiIrqsOfTheBusDeviceAndIrqNames) {
  FakeRoot sys("sys");
  ASSERT_FALSE(sys.path().empty());
  const std::string& root = sys.path();
  // eth0: virtio, vectors on the PCI parent of the virtio device.
  for (const char* d : {"/devices", "/devices/pci0", "/devices/pci0/virtio2", "/devices/pci0/msi_irqs",
                        "/devices/pci0/msi_irqs/37", "/devices/pci0/msi_irqs/38",
                        "/class", "/class/net", "/class/net/eth0", "/class/net/lo"})
    ::mkdir((root + d).c_str(), 0755);
  ASSERT_EQ(::symlink((root + "/devices/pci0/virtio2").c_str(), (root + "/class/net/eth0/device").c_str()), 0);
  model::IrqTable irqs;
  irqs[37].irq = 37;
  irqs[37].name = "virtio2-config";
  irqs[38].irq = 38;
  irqs[38].name = "virtio2-input.0";
  irqs[90].irq = 90;
  irqs[90].name = "ice-eth3-TxRx-2";  // no such device here: left alone
  irqs[91].irq = 91;
  irqs[91].name = "i8042";
  MapNicIrqs(&irqs, root);
  EXPECT_EQ(irqs[38].device, "eth0");
  EXPECT_EQ(irqs[38].queue, 0);
  EXPECT_EQ(irqs[38].queue_kind, "rx");
  EXPECT_EQ(irqs[37].device, "eth0");
  EXPECT_EQ(irqs[37].queue_kind, "control");
  EXPECT_EQ(irqs[90].device, "");
  EXPECT_EQ(irqs[91].device, "");
}

TEST(IrqScanner, MapNicIrqsMatchesInterfaceNamesInIrqNames) {
  FakeRoot sys("sys");
  ASSERT_FALSE(sys.path().empty());
  const std::string& root = sys.path();
  for (const char* d : {"/class", "/class/net", "/class/net/eth1", "/class/net/eth10"})
    ::mkdir((root + d).c_str(), 0755);
  model::IrqTable irqs;
  irqs[100].irq = 100;
  irqs[100].name = "i40e-eth1-TxRx-3";
  irqs[101].irq = 101;
  irqs[101].name = "eth10-TxRx-0";
  MapNicIrqs(&irqs, root);
  EXPECT_EQ(irqs[100].device, "eth1");
  EXPECT_EQ(irqs[100].queue, 3);
  EXPECT_EQ(irqs[101].device, "eth10");
}

}  // namespace
}  // namespace gpunoise::collect
