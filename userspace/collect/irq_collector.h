// bpf/irq.bpf.c: hard irqs, softirqs, x86 system vectors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collect/collector.h"
#include "model/events.h"

struct irq_bpf;

namespace gpunoise::collect {

// NET_RX storms timed 1 in 16 by default (record --netrx-sample, the flight
// recorder): the storm's cost on its CPU falls to about a third
// (docs/performance.md, "NET_RX storms sampled"), and a 100 ms window of a
// storm still holds hundreds of timed softirqs to estimate the rest from.
inline constexpr uint32_t kDefaultNetRxSampleEvery = 16;

class IrqCollector : public Collector {
 public:
  // hardirq: irq_handler_* and system vectors; softirq: softirq_*.
  // `batching`: every record goes to the ring in per-CPU batches
  // (bpf/batch.bpf.h); the caller flushes them (batch_flush_fd).
  // `netrx_sample_every`: NET_RX storms timed 1 in this many, the rest
  // counted (bpf/irq.bpf.c, "NET_RX storms are sampled"); 0: all timed.
  IrqCollector(bool hardirq, bool softirq, bool batching = false, uint32_t netrx_sample_every = 0);
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

  // NET_RX softirqs left untimed on each CPU (index: CPU number) since the
  // programs were loaded; empty when unknown (no softirqs recorded, or the
  // map could not be read). Exact: each is counted by its entry program.
  std::vector<uint64_t> UntimedNetRx() const;

  // Per CPU (index: CPU number), per softirq vector: how many times the
  // softirq_entry program ran since it was attached. Empty when unknown
  // (no softirqs recorded, or the map could not be read).
  std::vector<model::SoftirqCounts> SoftirqEntryRuns() const;

  // The action name the kernel side saw for `irq` (irq_handler_entry).
  std::optional<std::string> LookupIrqName(int32_t irq) const;

 private:
  bool hardirq_;
  bool softirq_;
  bool batching_;
  uint32_t netrx_sample_every_;
  int ContextFd() const;
  irq_bpf* skel_ = nullptr;
  int cpu_ctx_fd_ = -1;  // the transport's gn_cpu_ctx
};

}  // namespace gpunoise::collect
