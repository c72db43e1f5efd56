// placement: a focus thread waited in one CPU's run queue while another CPU
// its affinity allows sat idle: load balancing did not move it (a cpuset
// without load balancing, an isolated domain, a balancer that lost the
// race). Idle stretches shorter than placement.min_idle are the balancer's
// normal latency and do not count. Waits a CPU quota explains are not
// placement (cpu_throttling), and a thread pinned to one CPU has nowhere
// else to go (its waits are interference). Needs the affinity scans of
// record's "node" group.
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"
#include "analyze/node_metadata.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectPlacement(const AnalysisContext& ctx, const NodeMetadata& node);

}  // namespace gpunoise::analyze
