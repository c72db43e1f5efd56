// /proc/interrupts and IRQ names: the table collect/irq_scanner builds from
// the file's text, and what each action name says about a NIC queue, by
// both readers of names (collect's for the trace, analyze's for findings).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analyze/nic_irqs.h"
#include "collect/irq_scanner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpunoise::model::IrqTable table = gpunoise::collect::ParseInterrupts(text);
  for (const auto& [irq, info] : table) {
    (void)gpunoise::collect::ParseNicIrqName(info.name);
    (void)gpunoise::analyze::ParseNicIrqName(info.name);
  }
  (void)gpunoise::collect::ParseNicIrqName(text);
  (void)gpunoise::analyze::ParseNicIrqName(text);
  return 0;
}
