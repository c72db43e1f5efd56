// NIC trouble: the TX watchdog firing (net_dev_xmit_timeout), DQL stalls,
// NAPI polls that use their whole budget again and again, packet drops of
// one reason above a rate, NIC queue interrupts served on CPUs that run focus
// threads, and rising kernel lockup / RCU-stall / warn counters.
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectNicTrouble(const AnalysisContext& ctx);

// Counter tracks that count kernel trouble ("softlockup_count",
// "rcu_stall_count", "warn_count", "oops_count", "hardlockup_count"):
// the kind, or empty.
std::string KernelHealthCounterKind(std::string_view track_name);

}  // namespace gpunoise::analyze
