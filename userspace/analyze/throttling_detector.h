// cpu_throttling: focus threads kept off the CPU by their cgroup's CFS
// bandwidth quota. The scheduler's evidence is the thread's runnable waits
// (switched out runnable, back on with no wakeup between) that fall in the
// sample intervals where the cgroup's nr_throttled rose; the cgroup's own
// cpu.stat figures (throttled periods, throttled time) come beside them. One
// finding per quota cgroup that cost the focus threads at least
// throttling.min_delay and throttling.min_share of their time.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"
#include "analyze/node_metadata.h"

namespace gpunoise::analyze {

// A focus-thread wait the quota explains.
struct ThrottledWait {
  int32_t tid = 0;
  uint32_t cpu = 0;
  uint64_t start = 0, end = 0;
  const QuotaCgroupData* quota = nullptr;
};

// Every focus-thread wait inside a throttled interval of its cgroup, in the
// analysis window (clipped to it).
std::vector<ThrottledWait> ThrottledWaits(const AnalysisContext& ctx, const NodeMetadata& node);

std::vector<Finding> DetectCpuThrottling(const AnalysisContext& ctx, const NodeMetadata& node);

}  // namespace gpunoise::analyze
