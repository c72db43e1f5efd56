// The kernel's own trouble counters: /sys/kernel/softlockup_count,
// hardlockup_count, rcu_stall_count (Linux 6.16+), warn_count and
// oops_count (Linux 6.2+), each cumulative since boot. Only those this
// kernel has are returned.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/files.h"
#include "model/kernel_aggregates.h"

namespace gpunoise::collect {

inline constexpr std::string_view kKernelHealthCounters[] = {
    "softlockup_count", "hardlockup_count", "rcu_stall_count", "warn_count", "oops_count"};

// `sys_root` is "/sys" except in tests.
model::KernelHealthCounters ReadKernelHealth(const std::string& sys_root = "/sys");

// The same counters read again and again (record's node samples, ten a
// second): the files stay open and each read is one pread a counter.
class KernelHealthReader {
 public:
  explicit KernelHealthReader(const std::string& sys_root = "/sys");
  model::KernelHealthCounters Read() const;

 private:
  std::vector<std::pair<std::string, RereadableFile>> files_;  // the counters this kernel has
};

}  // namespace gpunoise::collect
