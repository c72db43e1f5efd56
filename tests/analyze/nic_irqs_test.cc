// Which IRQs serve a NIC in a trace. How names are read is
// model::ParseNicIrqName's (tests/model/nic_irq_name_test.cc, where this
// file's former name tests went); here: which source NicIrqs trusts.
#include "analyze/nic_irqs.h"

#include <gtest/gtest.h>

namespace gpunoise::analyze {
namespace {

TEST(NicIrqs, WithoutTheRecordersMapReadsDevicesAndQueuesFromIrqNames) {
  Timeline t;
  t.irq_names = {{30, "eth0-TxRx-3"}, {31, "mlx5_comp6@pci:0000:3b:00.0"}, {32, "nvme0q3"}, {33, "virtio0-config"}};
  auto irqs = NicIrqs(t, NetMetadata{});
  ASSERT_EQ(irqs.size(), 2u);
  EXPECT_EQ(irqs[30].device, "eth0");
  EXPECT_EQ(irqs[30].queue, 3);
  EXPECT_EQ(irqs[31].device, "mlx5@0000:3b:00.0");
  EXPECT_EQ(irqs[31].queue, 6);
}

TEST(NicIrqs, TheRecordersMapWinsOverNames) {
  Timeline t;
  t.irq_names = {{30, "eth0-TxRx-3"}};
  NetMetadata net;
  NetIrq irq;
  irq.irq = 44;
  irq.device = "ens5";
  irq.queue = 1;
  net.irqs.push_back(irq);
  auto irqs = NicIrqs(t, net);
  ASSERT_EQ(irqs.size(), 1u);
  EXPECT_EQ(irqs[44].device, "ens5");
  EXPECT_EQ(irqs[44].queue, 1);
}

}  // namespace
}  // namespace gpunoise::analyze
