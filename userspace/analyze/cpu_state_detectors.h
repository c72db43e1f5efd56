// Findings from the cpustate part of a recording (analyze/cpu_state_data.h;
// docs/report.md "Idle states, frequency, NUMA balancing and SMIs"):
// idle_exit: wakeups of focus threads that waited mostly for their CPU to
//   leave an idle state;
// cpu_frequency: focus threads running while their CPU's frequency was
//   reduced below a share of its maximum;
// numa_balancing: focus threads moved between NUMA nodes, or their pages
//   migrated, by automatic NUMA balancing;
// smi: system management interrupts during the recording (MSR_SMI_COUNT).
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/cpu_state_data.h"
#include "analyze/finding.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectIdleExit(const AnalysisContext& ctx, const CpuStateData& d);
std::vector<Finding> DetectCpuFrequency(const AnalysisContext& ctx, const CpuStateData& d);
std::vector<Finding> DetectNumaBalancing(const AnalysisContext& ctx, const CpuStateData& d);
std::vector<Finding> DetectSmis(const AnalysisContext& ctx, const CpuStateData& d);

}  // namespace gpunoise::analyze
