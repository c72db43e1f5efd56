// bpf/sched.bpf.c: context switches, wakeups, migrations, task lifecycle.
#pragma once

#include <memory>

#include "collect/collector.h"

struct sched_bpf;

namespace gpunoise::collect {

class SchedCollector : public Collector {
 public:
  SchedCollector();
  ~SchedCollector() override;

  std::string_view name() const override { return "sched"; }
  void Start(const CollectorContext& context) override;
  void AddMapFull(std::vector<model::MapLoss>& out) const override;

 private:
  void SeedSelectedThreads(const FilterOptions& f);

  sched_bpf* skel_ = nullptr;
  uint64_t seed_failures_ = 0;
};

}  // namespace gpunoise::collect
