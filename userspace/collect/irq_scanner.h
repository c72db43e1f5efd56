// IRQ names and affinities from /proc/interrupts and /proc/irq, and which
// network device and queue each NIC IRQ serves (/sys/class/net).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/irq_info.h"

namespace gpunoise::collect {

// `proc_root` is "/proc" except in tests.
model::IrqTable ScanIrqs(const std::string& proc_root = "/proc");
// The numbered IRQs and their action names in the text of /proc/interrupts
// (affinities are not in it: ScanIrqs adds them from /proc/irq).
model::IrqTable ParseInterrupts(std::string_view text);

// What a NIC IRQ's name says about its queue: "virtio2-input.0" is RX queue
// 0, "mlx5_comp12@pci:0000:3b:00.0" completion (TX and RX) queue 12,
// "ice-eth0-TxRx-5" queue pair 5, "virtio2-config" a control vector.
struct NicIrqName {
  std::string kind;  // "rx", "tx", "txrx", "control", or "" when unclear
  int32_t queue = -1;
};
NicIrqName ParseNicIrqName(std::string_view irq_name);

// Fills device, queue and queue_kind for the IRQs of each network device in
// `sys_root`/class/net: the IRQs its bus device lists in msi_irqs (on the
// device itself or, for virtio, on its PCI parent), or its legacy irq, and
// any IRQ whose name contains "DEV-" (drivers name queue vectors after the
// interface). `sys_root` is "/sys" except in tests.
void MapNicIrqs(model::IrqTable* irqs, const std::string& sys_root = "/sys");

}  // namespace gpunoise::collect
