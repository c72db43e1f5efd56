// Softirqs the kernel ran without calling its tracepoint: the difference
// between the kernel's own count (/proc/softirqs, raised on the line before
// softirq_entry) and an entry program's runs over the same span. The
// recorder takes it once per recording (record/softirq_audit.h), the
// monitor at every interval (monitor/continuous_softirq_audit.h).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "collect/proc_softirqs.h"
#include "model/events.h"

namespace gpunoise::collect {

// Per CPU (in all four counts), per vector: how much more the kernel's
// count rose than the program's runs, 0 where it did not. The kernel's
// counters are 32 bits wide and wrap; the difference is taken at that
// width, so a wrap in between is harmless.
//
// `runs_begin` was read before `kernel_begin`, `kernel_end` before
// `runs_end`: a softirq counted by the kernel between its two reads then
// ran its program between the program's two reads, whatever else ran, and
// the figure is a lower bound of the softirqs the kernel did not report.
// (Not quite: one stalled between the kernel's count and its tracepoint for
// longer than the two end reads take apart, by a hard irq, would count.)
std::map<uint32_t, model::SoftirqCounts> UnreportedSoftirqs(const std::vector<model::SoftirqCounts>& runs_begin,
                                                            const KernelSoftirqCounts& kernel_begin,
                                                            const KernelSoftirqCounts& kernel_end,
                                                            const std::vector<model::SoftirqCounts>& runs_end);

}  // namespace gpunoise::collect
