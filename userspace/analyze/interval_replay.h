// A recording replayed as the monitor would have seen it: the trace's
// events cut into intervals and summed into the kernel aggregates
// (model::AggregateSnapshot deltas) the monitor's interval detectors read,
// with the IRQ table and the device names they need. "The same data" for
// the report and the monitor: the findings of the monitor's pipeline on
// these intervals are compared with the report's on the same recording
// (ReportIntegration.ReplayedThroughTheMonitorGivesTheReportsFindings).
//
// What each aggregate is made of: softirq and hard IRQ time and counts from
// the CPUs' slices; the sampler's hits as one hit per millisecond of each
// task's run slices (ksoftirqd's share of a CPU is what the monitor takes
// from its sampler); focus threads' running, waiting and interrupted time
// from their activity, and who had the CPU while they waited (tasks, less
// the interrupts inside their runs, as the kernel charges them; its limit
// of 16 runs per CPU is not modelled); NAPI work from per-poll records, else the network
// collectors' per-CPU packet counters (their queue and IRQ from the NAPI
// totals, as the report names them); full-budget polls, drops and TX
// timeouts from their records or counters; the kernel's trouble counters
// (/sys/kernel/*_count) from their sampled tracks.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/analysis_context.h"
#include "model/irq_info.h"
#include "model/kernel_aggregates.h"
#include "model/net_counters.h"

namespace gpunoise::analyze {

struct ReplayedInterval {
  uint64_t start = 0, end = 0;
  model::AggregateSnapshot delta;
};

struct Replay {
  std::vector<ReplayedInterval> intervals;
  model::IrqTable irqs;
  model::NetNames names;
};

// Intervals of `interval_ns` across the analysis window [ctx.from, ctx.to)
// (the last one shorter when the window is not a multiple).
Replay ReplayAsIntervals(const AnalysisContext& ctx, uint64_t interval_ns);

}  // namespace gpunoise::analyze
