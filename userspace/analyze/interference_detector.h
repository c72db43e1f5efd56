// Interference: focus threads that were runnable but waiting in a run queue
// (after a wakeup or a preemption), or interrupted while running. The time is
// attributed to what had the CPU instead: another task (by name and pid), a
// hard IRQ (by name), a softirq (by vector). One finding per culprit that
// cost the focus threads more than interference.min_delay and
// interference.min_share of their time, with its worst windows.
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/attribution.h"
#include "analyze/finding.h"
#include "analyze/window_totals.h"

namespace gpunoise::analyze {

// Per culprit: how long it kept focus threads waiting, and interrupted them.
struct InterferenceTotals {
  struct PerCulprit {
    PerCulprit(uint64_t origin, uint64_t window_ns) : by_window(origin, window_ns) {}
    uint64_t wait_ns = 0;
    uint64_t interrupt_ns = 0;
    uint64_t waits = 0;  // run-queue waits it took part in
    std::map<int32_t, uint64_t> by_focus_tid;
    std::map<uint32_t, uint64_t> by_cpu;
    WindowTotals by_window;  // of interference.window from the analysis start
    uint64_t first = UINT64_MAX, last = 0;   // span of the time it took
    uint64_t total() const { return wait_ns + interrupt_ns; }
  };
  std::map<Culprit, PerCulprit> culprits;
  uint64_t wait_ns = 0;       // all run-queue waiting of focus threads
  uint64_t interrupt_ns = 0;  // all interrupt time inside focus runs
};

InterferenceTotals MeasureInterference(const AnalysisContext& ctx);
// gpunoise's own threads (the recorder), which the findings leave out.
bool IsRecorderThread(const Timeline& t, int32_t tid);
uint64_t RecorderCost(const InterferenceTotals& totals, const Timeline& t);
std::vector<Finding> DetectInterference(const AnalysisContext& ctx);

}  // namespace gpunoise::analyze
