// GPU idle gaps: between a process's GPU work (kernels, copies, memsets on
// any of its GPUs and streams), the GPUs sat idle. Each gap is joined to what
// the thread that launched the work after it was doing meanwhile: running
// on a CPU, waiting in a run queue behind a named culprit, interrupted, or
// blocked (asleep in a syscall or on a lock).
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectGpuIdleGaps(const AnalysisContext& ctx);

}  // namespace gpunoise::analyze
