// IRQ names and affinities from /proc/interrupts and /proc/irq.
#pragma once

#include <string>

#include "model/irq_info.h"

namespace gpunoise::collect {

// `proc_root` is "/proc" except in tests.
model::IrqTable ScanIrqs(const std::string& proc_root = "/proc");

}  // namespace gpunoise::collect
