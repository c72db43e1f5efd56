// CPU lists as the kernel writes them ("0-3,8,10-11"), as in
// /sys/devices/system/cpu/online and taskset -c.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gpunoise {

// Sorted, without duplicates.
Result<std::vector<int>> ParseCpuList(std::string_view text);

// The inverse for a sorted list: each run of at least `min_run` consecutive
// CPUs as "first-last", the rest one by one. The kernel ranges every run of
// two or more ("0-1,3"); findings people read range runs of three or more
// ("0,1,5-7"). The one formatter of CPU lists: ints (affinities, sysfs) and
// the trace's uint32 CPU numbers alike.
template <typename Cpu>  // int or uint32_t (instantiated in cpu_list.cc)
std::string FormatCpuList(const std::vector<Cpu>& cpus, size_t min_run = 2);
// For braced lists ({0, 1, 2}), which a template cannot deduce.
inline std::string FormatCpuList(const std::vector<int>& cpus, size_t min_run = 2) {
  return FormatCpuList<int>(cpus, min_run);
}

// Hex masks as in /proc/irq/N/smp_affinity ("ff,00000001").
Result<std::vector<int>> ParseCpuMask(std::string_view text);

// CPUs the kernel considers possible (sizes per-CPU resources) and online.
std::vector<int> PossibleCpus();
std::vector<int> OnlineCpus();

}  // namespace gpunoise
