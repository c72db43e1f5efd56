// What the name a driver gives an IRQ vector says about a NIC queue, by the
// drivers' naming conventions: "virtio2-input.0" is RX queue 0 of virtio2,
// "mlx5_comp12@pci:0000:3b:00.0" completion (TX and RX) queue 12,
// "ice-eth0-TxRx-5" queue pair 5 of eth0, "virtio2-config" a control vector.
//
// Its two readers ask different questions, which is why it answers two:
// the recorder (collect/irq_scanner) already knows from sysfs which device
// an IRQ serves and asks only the queue's kind and number, for any vector of
// that device, control vectors included; the report (analyze/nic_irqs), for
// a trace without the recorder's IRQ map, has only the name and must decide
// from it alone whether the IRQ is a NIC queue at all and whose, so it
// refuses names that other devices with per-queue vectors use too (nvme,
// virtio-blk, "virtio0-config").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpunoise::model {

struct NicIrqName {
  // Whether the name alone says it is a NIC queue, and then which device
  // ("eth0", "virtio2", "mlx5@0000:3b:00.0").
  bool is_nic_queue = false;
  std::string device;
  std::string kind;  // "rx", "tx", "txrx", "control", or "" when unclear
  int32_t queue = -1;  // -1 for control vectors and names without a number
};
NicIrqName ParseNicIrqName(std::string_view irq_name);

// The number at the end of `s` ("TxRx-3" -> 3); -1 when there is none or it
// has more than 6 digits (no NIC has a million queues).
int32_t TrailingQueueNumber(std::string_view s);

}  // namespace gpunoise::model
