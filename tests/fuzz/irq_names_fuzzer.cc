// /proc/interrupts and IRQ names: the table collect/irq_scanner builds from
// the file's text, and what each action name says about a NIC queue
// (model::ParseNicIrqName, which the recorder and the report share).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collect/irq_scanner.h"
#include "model/nic_irq_name.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpunoise::model::IrqTable table = gpunoise::collect::ParseInterrupts(text);
  for (const auto& [irq, info] : table) {
    (void)gpunoise::model::ParseNicIrqName(info.name);
  }
  (void)gpunoise::model::ParseNicIrqName(text);
  return 0;
}
