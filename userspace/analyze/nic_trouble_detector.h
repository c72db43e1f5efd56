// NIC trouble: the TX watchdog firing (net_dev_xmit_timeout), DQL stalls,
// NAPI polls that use their whole budget again and again, packet drops of
// one reason above a rate, NIC queue interrupts served on CPUs that run focus
// threads, and rising kernel lockup / RCU-stall / warn counters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectNicTrouble(const AnalysisContext& ctx);

// A kernel health counter (identity kind kernel_health_counter, its file
// in `detail`: "softlockup_count", "rcu_stall_count", "warn_count",
// "oops_count", "hardlockup_count"): the kind of trouble it counts,
// "softlockup", "rcu_stall", "warn_count", ...
std::string KernelHealthKind(std::string_view counter);

}  // namespace gpunoise::analyze
