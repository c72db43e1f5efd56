// The kernel's own trouble counters: /sys/kernel/softlockup_count,
// hardlockup_count, rcu_stall_count (Linux 6.16+), warn_count and
// oops_count (Linux 6.2+), each cumulative since boot. Only those this
// kernel has are returned.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/kernel_aggregates.h"

namespace gpunoise::collect {

inline constexpr std::string_view kKernelHealthCounters[] = {
    "softlockup_count", "hardlockup_count", "rcu_stall_count", "warn_count", "oops_count"};

// `sys_root` is "/sys" except in tests.
model::KernelHealthCounters ReadKernelHealth(const std::string& sys_root = "/sys");

}  // namespace gpunoise::collect
