// bpf/sched.bpf.c: context switches, wakeups, migrations, task lifecycle.
#pragma once

#include <memory>

#include "collect/collector.h"

struct sched_bpf;

namespace gpunoise::collect {

class SchedCollector : public Collector {
 public:
  // `batching`: switches and wakeups go to the ring in per-CPU batches
  // (bpf/batch.bpf.h); the caller flushes them (batch_flush_fd).
  explicit SchedCollector(bool batching = false);
  ~SchedCollector() override;

  std::string_view name() const override { return "sched"; }
  void Start(const CollectorContext& context) override;
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;
  int batch_flush_fd() const override;
  const gn_batch_word* batch_words() const override;
  uint32_t batch_stream() const override { return GN_BATCH_STREAM_SCHED; }

 private:
  void SeedSelectedThreads(const FilterOptions& f);

  sched_bpf* skel_ = nullptr;
  uint64_t seed_failures_ = 0;
  bool batching_ = false;
};

}  // namespace gpunoise::collect
