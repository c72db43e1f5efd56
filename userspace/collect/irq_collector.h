// bpf/irq.bpf.c: hard irqs, softirqs, x86 system vectors.
#pragma once

#include <optional>
#include <string>

#include "collect/collector.h"

struct irq_bpf;

namespace gpunoise::collect {

class IrqCollector : public Collector {
 public:
  // hardirq: irq_handler_* and system vectors; softirq: softirq_*.
  IrqCollector(bool hardirq, bool softirq);
  ~IrqCollector() override;

  std::string_view name() const override { return "irq"; }
  void Start(const CollectorContext& context) override;

  // The action name the kernel side saw for `irq` (irq_handler_entry).
  std::optional<std::string> LookupIrqName(int32_t irq) const;

 private:
  bool hardirq_;
  bool softirq_;
  irq_bpf* skel_ = nullptr;
};

}  // namespace gpunoise::collect
