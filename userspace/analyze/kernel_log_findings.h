// Findings from the kernel log of a recording: messages of a known class
// (model/kernel_log.h) grouped by class and the device they name, each
// quoting its lines, with the CPU and task the kernel named for lockups and
// hung tasks. Link-up and other informational lines are evidence only.
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectKernelLogTrouble(const AnalysisContext& ctx);

}  // namespace gpunoise::analyze
