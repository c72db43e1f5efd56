// Kernel work that ran on the focus threads' CPUs in their stead (the kwork
// collector's records, Timeline::kernel_work):
//  - ipi_tlb: function-call IPIs (TLB shootdowns above all) whose callbacks
//    interrupted a focus thread, attributed to the thread that queued them
//    (csd:csd_queue_cpu: the latest request of the same callback, and the
//    same csd where both name one, aimed at that CPU at most
//    ipi.max_send_gap before). One finding per sender and callback.
//  - timer: hrtimer callbacks that interrupted a focus thread, one finding
//    per CPU and callback function.
//  - workqueue: work items whose kworker ran while a focus thread waited in
//    that CPU's run queue, one finding per CPU and work function.
// An interrupt-context callback costs its share (by its own time) of the
// hard-irq slice around it (the irq collector's local_timer/call_function
// vectors: entry, exit and the wakeups it made), or its own time where the
// trace has no such slice. VM exits and refilled TLBs come on top: a lower
// bound.
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectIpis(const AnalysisContext& ctx);
std::vector<Finding> DetectKernelWork(const AnalysisContext& ctx);

}  // namespace gpunoise::analyze
