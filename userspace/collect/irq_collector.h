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
  // `batching`: every record goes to the ring in per-CPU batches
  // (bpf/batch.bpf.h); the caller flushes them (batch_flush_fd).
  IrqCollector(bool hardirq, bool softirq, bool batching = false);
  ~IrqCollector() override;

  std::string_view name() const override { return "irq"; }
  void Start(const CollectorContext& context) override;
  int batch_flush_fd() const override;
  const gn_batch_word* batch_words() const override;
  uint32_t batch_stream() const override { return GN_BATCH_STREAM_IRQ; }
  // Softirq entries still open on a CPU (bpf/irq.bpf.c: "Softirq entries
  // wait for their exit") are written by a program run on that CPU.
  uint64_t FlushHeldRecords(std::span<const int> cpus) override;
  // Whether softirq entries wait for their exit (softirqs recorded, no
  // batching).
  bool defers_softirq_entries() const { return softirq_ && !batching_; }

  // The action name the kernel side saw for `irq` (irq_handler_entry).
  std::optional<std::string> LookupIrqName(int32_t irq) const;

 private:
  bool hardirq_;
  bool softirq_;
  bool batching_;
  irq_bpf* skel_ = nullptr;
  int cpu_ctx_fd_ = -1;  // the transport's gn_cpu_ctx
};

}  // namespace gpunoise::collect
