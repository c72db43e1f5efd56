// On each CPU, every sched_switch's prev must be the task the previous
// switch put there. When it is not, the kernel made a switch whose tracepoint
// never reached us: no ring dropped it, so only this check can see it.
// (On the VM gpunoise is developed on, a few switches from idle per thousand
// are never delivered to any tracepoint consumer under load; MEASURED.md
// shows ftrace and perf missing far more.)
#pragma once

#include <cstdint>
#include <vector>

#include "model/events.h"

namespace gpunoise::model {

class SwitchChain {
 public:
  // Events of one CPU must arrive in time order.
  void Observe(const Event& event);

  uint64_t breaks(uint32_t cpu) const { return cpu < cpus_.size() ? cpus_[cpu].breaks : 0; }
  uint64_t total_breaks() const;

 private:
  struct PerCpu {
    int32_t current_tid = -1;  // -1: not known yet
    uint64_t breaks = 0;
  };
  std::vector<PerCpu> cpus_;
};

}  // namespace gpunoise::model
