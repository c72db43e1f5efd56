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
  void AddLostPerCpu(std::vector<uint64_t>& lost) const override;

 private:
  sched_bpf* skel_ = nullptr;
};

}  // namespace gpunoise::collect
