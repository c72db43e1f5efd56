// steal: the hypervisor ran someone else on a focus thread's vCPU while the
// thread was running there (per-CPU steal from /proc/stat, record's "node"
// group). The guest's scheduler sees the thread running all along, so no
// other detector can see this time. One finding when steal during the focus
// threads' running time reaches steal.min_delay and steal.min_share of
// their observed time.
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"
#include "analyze/node_metadata.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectSteal(const AnalysisContext& ctx, const NodeMetadata& node);

}  // namespace gpunoise::analyze
