#include "analyze/nic_irqs.h"

#include <gtest/gtest.h>

namespace gpunoise::analyze {
namespace {

void Expect(std::string_view name, const char* device, int32_t queue) {
  auto q = ParseNicIrqName(name);
  ASSERT_TRUE(q.has_value()) << name;
  EXPECT_EQ(q->device, device) << name;
  EXPECT_EQ(q->queue, queue) << name;
}

TEST(NicIrqs, ParsesDriverNamingConventions) {
  Expect("eth0-TxRx-3", "eth0", 3);
  Expect("ens5-rx-1", "ens5", 1);
  Expect("i40e-eth2-TxRx-7", "eth2", 7);
  Expect("ice-ens1f0-TxRx-12", "ens1f0", 12);
  Expect("ena-Tx-Rx-4", "ena", 4);
  Expect("virtio2-input.0", "virtio2", 0);
  Expect("virtio2-output.1", "virtio2", 1);
  Expect("mlx5_comp6@pci:0000:3b:00.0", "mlx5@0000:3b:00.0", 6);
}

TEST(NicIrqs, LeavesOtherDevicesAlone) {
  for (std::string_view name : {"nvme0q3", "virtio1-req.0", "virtio0-config", "virtio3-rx", "virtio4-input",
                                "ttyS0", "ACPI:Ged", "xhci_hcd", "ahci[0000:00:17.0]"})
    EXPECT_FALSE(ParseNicIrqName(name).has_value()) << name;
}

}  // namespace
}  // namespace gpunoise::analyze
