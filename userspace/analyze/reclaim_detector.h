// reclaim: focus threads stalled in memory reclaim or compaction (the
// memstall collector's slices on their thread tracks: direct reclaim, memcg
// reclaim, reclaim throttling, compaction). One finding per kind whose
// stalls (their union per thread, within the window) cost the focus threads
// at least reclaim.min_delay and reclaim.min_share of their time. Pauses in
// balance_dirty_pages (a writer throttled for its dirty pages) are the same
// kind of stall and give writeback_stall findings, same thresholds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"

namespace gpunoise::analyze {

struct FocusStall {
  int32_t tid = 0;
  uint32_t cpu = 0;  // the CPU the thread was on when it began (or last ran on)
  uint64_t start = 0, end = 0;
  std::string kind;  // "memcg reclaim", ...
};

// Focus-thread stalls within the window, clipped, sorted by start.
std::vector<FocusStall> FocusStalls(const AnalysisContext& ctx);
// Their union per thread (nested or overlapping kinds counted once), by CPU.
std::map<uint32_t, uint64_t> StallNsByCpu(const std::vector<FocusStall>& stalls);

std::vector<Finding> DetectReclaim(const AnalysisContext& ctx);

}  // namespace gpunoise::analyze
