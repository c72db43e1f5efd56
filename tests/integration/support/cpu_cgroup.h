// A cgroup a test creates in the CPU controller's hierarchy (v2 cpu.max where
// cgroup v2 has the cpu controller, else v1 cpu.cfs_quota_us), with a CPU
// quota, removed (its processes moved back to the root first) on
// destruction, also when the test fails.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "model/node_counters.h"

namespace gpunoise::testing {

class CpuCgroup {
 public:
  // `name` must carry the test's unique prefix. quota_us 0: no quota.
  CpuCgroup(const std::string& name, uint64_t quota_us, uint64_t period_us);
  ~CpuCgroup();
  CpuCgroup(const CpuCgroup&) = delete;
  CpuCgroup& operator=(const CpuCgroup&) = delete;

  bool ok() const { return !dir_.empty(); }
  const std::string& error() const { return error_; }
  int version() const { return version_; }
  const std::string& path() const { return path_; }  // "/name", as record writes it
  // Moves `pid` (a whole process) into the cgroup.
  bool Join(pid_t pid) const;
  model::CgroupCpuStat Stat() const;

 private:
  std::string root_, dir_, path_, error_;
  int version_ = 1;
};

}  // namespace gpunoise::testing
