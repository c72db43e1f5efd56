#include "collect/irq_scanner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace gpunoise::collect {
namespace {

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(IrqScanner, ReadsNamesAndAffinitiesFromAProcTree) {
  char tmpl[] = "/tmp/gpunoise-proc-XXXXXX";
  std::string root = ::mkdtemp(tmpl);
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

}  // namespace
}  // namespace gpunoise::collect
