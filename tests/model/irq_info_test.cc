#include "model/irq_info.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

IrqInfo Nic(int32_t irq, std::string name, std::string device, int32_t queue, std::string kind) {
  IrqInfo i;
  i.irq = irq;
  i.name = std::move(name);
  i.device = std::move(device);
  i.queue = queue;
  i.queue_kind = std::move(kind);
  return i;
}

TEST(IrqInfo, DescribeNicIrqSaysWhichCpuHandlesWhichQueue) {
  IrqInfo i = Nic(38, "virtio2-input.0", "eth0", 0, "rx");
  i.affinity = {0, 1};
  i.effective_affinity = {1};
  EXPECT_EQ(DescribeNicIrq(i), "CPU 1 handles eth0 rx queue 0 (IRQ 38)");
}

TEST(IrqInfo, DescribeNicIrqFallsBackToTheAllowedCpus) {
  IrqInfo i = Nic(90, "mlx5_comp5@pci:0000:3b:00.0", "eth2", 5, "txrx");
  i.affinity = {4, 5, 6, 7};
  EXPECT_EQ(DescribeNicIrq(i),
            "CPUs 4-7 may handle eth2 txrx queue 5 (IRQ 90) (effective affinity unknown)");
}

TEST(IrqInfo, DescribeNicIrqOfAControlVectorNamesIt) {
  IrqInfo i = Nic(37, "virtio2-config", "eth0", -1, "control");
  i.effective_affinity = {0};
  EXPECT_EQ(DescribeNicIrq(i), "CPU 0 handles eth0 (virtio2-config, control) (IRQ 37)");
}

TEST(IrqInfo, DescribeNicIrqIsEmptyWithoutADevice) {
  IrqInfo i;
  i.irq = 1;
  i.name = "i8042";
  EXPECT_EQ(DescribeNicIrq(i), "");
}

}  // namespace
}  // namespace gpunoise::model
