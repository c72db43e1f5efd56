// bpf/irqtime.bpf.c: softirq time and count per CPU and vector, hard-irq
// time and count per IRQ and CPU, x86 system vectors per CPU, and the
// interrupt time that ran over focus threads. Aggregates only.
#pragma once

#include "collect/collector.h"
#include "model/kernel_aggregates.h"

struct irqtime_bpf;

namespace gpunoise::collect {

class IrqtimeCollector : public Collector {
 public:
  explicit IrqtimeCollector(int focus_map_fd);
  ~IrqtimeCollector() override;

  std::string_view name() const override { return "irqtime"; }
  void Start(const CollectorContext& context) override;
  // IRQ updates that found the hash full.
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;

  // Fills out->softirqs, hardirqs, vectors and the interrupt part of
  // out->focus (cumulative).
  void Read(model::AggregateSnapshot* out) const;
  void SetFocusEnabled(bool enabled);
  // The per-CPU "which interrupt is running" state the sampler reads; -1
  // when this collector is not running.
  int irq_state_map_fd() const;

 private:
  int focus_map_fd_;
  irqtime_bpf* skel_ = nullptr;
};

}  // namespace gpunoise::collect
