#include "analyze/interference_core.h"

#include <algorithm>

#include <fmt/format.h>

#include "model/events.h"

namespace gpunoise::analyze {

InterferenceRule InterferenceRule::From(const Thresholds& t) {
  return {t.GetNs("interference.min_delay"), t.Get("interference.min_share")};
}

double InterferenceShare(uint64_t cost_ns, uint64_t observed_ns) {
  return static_cast<double>(cost_ns) / static_cast<double>(std::max<uint64_t>(1, observed_ns));
}

bool InterferenceRule::Reached(uint64_t cost_ns, uint64_t observed_ns) const {
  return cost_ns >= min_delay_ns && InterferenceShare(cost_ns, observed_ns) >= min_share;
}

std::string_view InterferenceKind(uint64_t wait_ns, uint64_t interrupt_ns) {
  return wait_ns >= interrupt_ns ? "run_queue_delay" : "interrupted";
}

std::string SoftirqCulpritName(uint32_t vec) { return fmt::format("softirq {}", model::SoftirqName(vec)); }

std::string HardirqCulpritName(int32_t irq, std::string_view name) {
  return name.empty() ? fmt::format("hardirq irq {}", irq) : fmt::format("hardirq {} (irq {})", name, irq);
}

}  // namespace gpunoise::analyze
