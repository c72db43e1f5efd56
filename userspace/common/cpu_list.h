// CPU lists as the kernel writes them ("0-3,8,10-11"), as in
// /sys/devices/system/cpu/online and taskset -c.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise {

// Sorted, without duplicates.
Result<std::vector<int>> ParseCpuList(std::string_view text);
std::string FormatCpuList(const std::vector<int>& cpus);

// Hex masks as in /proc/irq/N/smp_affinity ("ff,00000001").
Result<std::vector<int>> ParseCpuMask(std::string_view text);

// CPUs the kernel considers possible (sizes per-CPU resources) and online.
std::vector<int> PossibleCpus();
std::vector<int> OnlineCpus();

}  // namespace gpunoise
