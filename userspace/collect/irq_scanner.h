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

// Fills device, queue and queue_kind for the IRQs of each network device in
// `sys_root`/class/net: the IRQs its bus device lists in msi_irqs (on the
// device itself or, for virtio, on its PCI parent), or its legacy irq, and
// any IRQ whose name contains "DEV-" (drivers name queue vectors after the
// interface). Queue and kind come from the IRQ's name
// (model::ParseNicIrqName). `sys_root` is "/sys" except in tests.
void MapNicIrqs(model::IrqTable* irqs, const std::string& sys_root = "/sys");

}  // namespace gpunoise::collect
