#include "model/switch_chain.h"

namespace gpunoise::model {

void SwitchChain::Observe(const Event& event) {
  const auto* sw = std::get_if<SchedSwitch>(&event.payload);
  if (!sw) return;
  if (cpus_.size() <= event.cpu) cpus_.resize(event.cpu + 1);
  PerCpu& c = cpus_[event.cpu];
  if (c.current_tid >= 0 && sw->prev_tid != c.current_tid) ++c.breaks;
  c.current_tid = sw->next_tid;
}

uint64_t SwitchChain::total_breaks() const {
  uint64_t total = 0;
  for (const auto& c : cpus_) total += c.breaks;
  return total;
}

}  // namespace gpunoise::model
