// bpf/runqlat.bpf.c: run-queue latency histograms (all threads, focus
// threads), focus threads' switches, preemptions, on-CPU and wait time per
// CPU, and the tasks that had the CPU while they waited. Aggregates only:
// no ring records.
#pragma once

#include <cstdint>
#include <set>

#include "collect/collector.h"
#include "model/kernel_aggregates.h"

struct runqlat_bpf;

namespace gpunoise::collect {

class RunqlatCollector : public Collector {
 public:
  // `focus_map_fd`: the shared focus set (collect/focus_map.h);
  // `irq_state_map_fd`: the irqtime collector's per-CPU interrupt state,
  // whose clocks take interrupts out of the waits charged to tasks (-1:
  // none, then a task keeps the interrupts inside its runs).
  RunqlatCollector(int focus_map_fd, int irq_state_map_fd);
  ~RunqlatCollector() override;

  std::string_view name() const override { return "runqlat"; }
  void Start(const CollectorContext& context) override;
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;

  // Fills out->runqueue, out->focus and out->culprits (cumulative), for
  // every possible CPU with any count. Culprits whose task has exited are
  // reported one last time, then deleted from the kernel's map (only where
  // /proc shows the kernel's pids: in the initial pid namespace).
  void Read(model::AggregateSnapshot* out);
  void SetFocusEnabled(bool enabled);

 private:
  void ReadCulprits(model::AggregateSnapshot* out);

  int focus_map_fd_;
  int irq_state_map_fd_;
  runqlat_bpf* skel_ = nullptr;
  bool prune_ = false;
  std::set<uint32_t> exited_;  // culprits seen gone at the last read
};

}  // namespace gpunoise::collect
