// The interference rule, one for the report and the monitor: a culprit
// (a task, a hard IRQ, a softirq) that kept focus threads waiting in a run
// queue or interrupted them is a finding when its cost reaches
// interference.min_delay and interference.min_share of the focus threads'
// observed time (running plus waiting) over the span judged: the whole
// analysis window in the report, one interval in the monitor
// (docs/report.md, "Window semantics"). interference.window only ranks the
// report's worst windows; it decides nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analyze/thresholds.h"

namespace gpunoise::analyze {

struct InterferenceRule {
  uint64_t min_delay_ns = 0;  // interference.min_delay
  double min_share = 0;       // interference.min_share

  static InterferenceRule From(const Thresholds& t);
  // `cost_ns` of the focus threads' `observed_ns` makes a finding.
  bool Reached(uint64_t cost_ns, uint64_t observed_ns) const;
};

// The cost's share of the observed time (observed 0 counts as 1 ns).
double InterferenceShare(uint64_t cost_ns, uint64_t observed_ns);

// "run_queue_delay" when waiting behind the culprit is at least as big as
// its interruptions, else "interrupted".
std::string_view InterferenceKind(uint64_t wait_ns, uint64_t interrupt_ns);

// Interrupt culprits as the report names them (attribution.h,
// DescribeCulprit): "softirq NET_RX", "hardirq eth0-TxRx-3 (irq 45)"
// ("hardirq irq 45" without a name).
std::string SoftirqCulpritName(uint32_t vec);
std::string HardirqCulpritName(int32_t irq, std::string_view name);

}  // namespace gpunoise::analyze
