// The detectors for continuous mode (`gpunoise monitor`): the report's
// softirq storm, interference and NIC trouble rules (storm_core.h,
// interference_core.h, nic_trouble_core.h) applied to one interval's deltas
// of the kernel's aggregates (model/kernel_aggregates.h) instead of a
// timeline of events, with the same thresholds, kinds and culprits.
//
// The interval is the window: where the report's threshold has a shorter
// one (softirq.window, 100 ms), the monitor judges the same share over the
// whole interval, so a burst shorter than the interval is diluted (a 100 ms
// storm at 100% is 10% of a 1 s interval); docs/report.md, "Window
// semantics", lists each threshold's window in both.
//
// What an interval cannot tell: ksoftirqd's running time (the sampler's
// counts stand in for it), which IRQ or vector interrupted or delayed a
// focus thread, the part of a long wait that lay before the CPU's last 16
// runs (bpf/runqlat.h), and when inside the interval something happened (a
// finding spans the whole interval).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/finding.h"
#include "analyze/thresholds.h"
#include "model/irq_info.h"
#include "model/kernel_aggregates.h"
#include "model/net_counters.h"

namespace gpunoise::analyze {

struct IntervalContext {
  const model::AggregateSnapshot* delta = nullptr;  // this interval's counts
  uint64_t start = 0, end = 0;                      // CLOCK_BOOTTIME
  const model::IrqTable* irqs = nullptr;            // names, NIC devices and queues
  const model::NetNames* names = nullptr;           // device and drop-reason names
  const Thresholds* thresholds = nullptr;

  uint64_t length_ns() const { return end > start ? end - start : 0; }
};

// On one CPU, one softirq vector took at least softirq.share of the
// interval, or ksoftirqd ran at least softirq.ksoftirqd_share of it (from
// the sampler's hits there). Names the device, queue and IRQ that drove it
// (NAPI work and NIC interrupts on that CPU), as the report does.
std::vector<Finding> DetectIntervalSoftirqStorms(const IntervalContext& ctx);

// One finding per culprit that cost the focus threads at least
// interference.min_delay and interference.min_share of their time (running
// plus waiting): each task that had a CPU while they waited for it (its
// runs less the interrupts inside them; gpunoise itself never), and the
// hard irqs and softirqs that interrupted them or ran while they waited,
// named by the IRQ and the vector that took the most time on their CPUs.
std::vector<Finding> DetectIntervalInterference(const IntervalContext& ctx);

// TX watchdog timeouts (per device), DQL stalls, NAPI polls that used their
// whole budget at nic.full_budget_rate or more (per device and CPU), drops
// of one reason on one device at nic.drop_rate or more, NIC interrupts on
// CPUs where focus threads ran (at least nic.irq_overlap_min, costing
// nic.irq_overlap_share), and rising kernel lockup / RCU-stall / warn / oops
// counters (kernel_health).
std::vector<Finding> DetectIntervalNicTrouble(const IntervalContext& ctx);

// All three, storms first.
std::vector<Finding> DetectIntervalFindings(const IntervalContext& ctx);

// One line for the monitor's log when its interval is longer than a
// threshold's window (softirq.window): what a short burst looks like at the
// interval's resolution. Empty when they agree.
std::string IntervalWindowNote(const Thresholds& thresholds, uint64_t interval_ns);

}  // namespace gpunoise::analyze
