// Softirq storm: on one CPU, one softirq vector takes more than
// softirq.share of a softirq.window-long sliding window, or ksoftirqd (the
// kernel thread softirqs fall back to when they keep coming) runs more than
// softirq.ksoftirqd_share of it. Consecutive windows merge into one episode.
// Each finding names the device, queue and IRQ that drove it when the trace
// has network data, and the focus threads it displaced.
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectSoftirqStorms(const AnalysisContext& ctx);

}  // namespace gpunoise::analyze
