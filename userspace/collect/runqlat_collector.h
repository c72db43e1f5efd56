// bpf/runqlat.bpf.c: run-queue latency histograms (all threads, focus
// threads) and focus threads' switches, preemptions, on-CPU and wait time,
// per CPU. Aggregates only: no ring records.
#pragma once

#include "collect/collector.h"
#include "model/kernel_aggregates.h"

struct runqlat_bpf;

namespace gpunoise::collect {

class RunqlatCollector : public Collector {
 public:
  // `focus_map_fd`: the shared focus set (collect/focus_map.h).
  explicit RunqlatCollector(int focus_map_fd);
  ~RunqlatCollector() override;

  std::string_view name() const override { return "runqlat"; }
  void Start(const CollectorContext& context) override;
  void AddMapFull(std::vector<model::MapLoss>& out) const override;

  // Fills out->runqueue and out->focus (cumulative), for every possible CPU
  // with any count.
  void Read(model::AggregateSnapshot* out) const;
  void SetFocusEnabled(bool enabled);

 private:
  int focus_map_fd_;
  runqlat_bpf* skel_ = nullptr;
};

}  // namespace gpunoise::collect
