// The one reader of NIC IRQ names, for both of its callers: the recorder's
// queue kind and number (collect/irq_scanner) and the report's "is this a
// NIC queue, and whose" (analyze/nic_irqs). The first two tests are the
// two callers' former tests, assertions unchanged.
#include "model/nic_irq_name.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

std::string KindAndQueue(std::string_view n) {
  NicIrqName r = ParseNicIrqName(n);
  return r.kind + ":" + std::to_string(r.queue);
}

void ExpectNicQueue(std::string_view name, const char* device, int32_t queue) {
  NicIrqName q = ParseNicIrqName(name);
  ASSERT_TRUE(q.is_nic_queue) << name;
  EXPECT_EQ(q.device, device) << name;
  EXPECT_EQ(q.queue, queue) << name;
}

TEST(NicIrqName, ReadsQueueKindAndNumber) {
  EXPECT_EQ(KindAndQueue("virtio2-input.0"), "rx:0");
  EXPECT_EQ(KindAndQueue("virtio2-output.3"), "tx:3");
  EXPECT_EQ(KindAndQueue("virtio2-config"), "control:-1");
  EXPECT_EQ(KindAndQueue("mlx5_comp12@pci:0000:3b:00.0"), "txrx:12");
  EXPECT_EQ(KindAndQueue("mlx5_async0@pci:0000:3b:00.0"), "control:-1");
  EXPECT_EQ(KindAndQueue("ice-eth0-TxRx-5"), "txrx:5");
  EXPECT_EQ(KindAndQueue("eth0-Tx-Rx-7"), "txrx:7");
  EXPECT_EQ(KindAndQueue("gve-ntfy-blk2@pci:0000:00:04.0"), "txrx:2");
  EXPECT_EQ(KindAndQueue("eth1-rx-4"), "rx:4");
  EXPECT_EQ(KindAndQueue("eth1-tx-4"), "tx:4");
  EXPECT_EQ(KindAndQueue("ena-mgmnt@pci:0000:00:05.0"), "control:-1");
  EXPECT_EQ(KindAndQueue("timer"), ":-1");
}

TEST(NicIrqName, ParsesDriverNamingConventions) {
  ExpectNicQueue("eth0-TxRx-3", "eth0", 3);
  ExpectNicQueue("ens5-rx-1", "ens5", 1);
  ExpectNicQueue("i40e-eth2-TxRx-7", "eth2", 7);
  ExpectNicQueue("ice-ens1f0-TxRx-12", "ens1f0", 12);
  ExpectNicQueue("ena-Tx-Rx-4", "ena", 4);
  ExpectNicQueue("virtio2-input.0", "virtio2", 0);
  ExpectNicQueue("virtio2-output.1", "virtio2", 1);
  ExpectNicQueue("mlx5_comp6@pci:0000:3b:00.0", "mlx5@0000:3b:00.0", 6);
}

TEST(NicIrqName, LeavesOtherDevicesAlone) {
  for (std::string_view name : {"nvme0q3", "virtio1-req.0", "virtio0-config", "virtio3-rx", "virtio4-input",
                                "ttyS0", "ACPI:Ged", "xhci_hcd", "ahci[0000:00:17.0]"})
    EXPECT_FALSE(ParseNicIrqName(name).is_nic_queue) << name;
}

TEST(NicIrqName, ControlVectorsHaveAKindButNoQueueAndNameNoNicOnTheirOwn) {
  // The recorder, which knows the device from sysfs, still learns the kind;
  // the report, which has only the name, does not claim it for a NIC.
  NicIrqName config = ParseNicIrqName("virtio2-config");
  EXPECT_EQ(config.kind, "control");
  EXPECT_EQ(config.queue, -1);
  EXPECT_FALSE(config.is_nic_queue);
  EXPECT_TRUE(config.device.empty());
}

TEST(NicIrqName, QueueNumbersEndTheNameBeforeTheBusAddress) {
  EXPECT_EQ(ParseNicIrqName("mlx5_comp3@pci:0000:3b:00.7").queue, 3);
  EXPECT_EQ(ParseNicIrqName("  eth0-TxRx-2  ").queue, 2);  // padding is not part of the name
  EXPECT_EQ(ParseNicIrqName("eth0-TxRx-999999").queue, 999999);
  EXPECT_EQ(ParseNicIrqName("eth0-TxRx-1000000").queue, -1);  // 7 digits: not a queue
}

TEST(NicIrqName, TrailingQueueNumberReadsUpToSixDigits) {
  EXPECT_EQ(TrailingQueueNumber("TxRx-3"), 3);
  EXPECT_EQ(TrailingQueueNumber("eth0-rx"), -1);
  EXPECT_EQ(TrailingQueueNumber(""), -1);
  EXPECT_EQ(TrailingQueueNumber("q123456"), 123456);
  EXPECT_EQ(TrailingQueueNumber("q1234567"), -1);
}

}  // namespace
}  // namespace gpunoise::model
