// What sysfs, procfs and /dev/cpu say about the CPUs' power management and
// NUMA layout, for the cpustate part of a recording: each CPU's cpuidle
// states (name, exit latency), its cpufreq limits and current frequency,
// the NUMA node count and kernel.numa_balancing, and the SMI counter
// (MSR_SMI_COUNT, 0x34) where /dev/cpu/N/msr can be read. Paths are taken
// relative to a root so tests can use a directory of their own.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace gpunoise::collect {

struct IdleStateInfo {
  uint32_t cpu = 0, index = 0;
  std::string name;              // "C1", "haltpoll", "POLL"
  uint64_t exit_latency_us = 0;  // the driver's stated worst case
};

struct FrequencyInfo {
  uint32_t cpu = 0;
  uint32_t min_khz = 0, max_khz = 0;  // cpuinfo_min_freq / cpuinfo_max_freq
  uint32_t cur_khz = 0;               // scaling_cur_freq at the start; 0: unknown
};

// /sys/devices/system/cpu/cpu<N>/cpuidle/state<K>/{name,latency}.
std::vector<IdleStateInfo> ReadIdleStates(const std::string& sys_cpu_dir, const std::vector<int>& cpus);
// /sys/devices/system/cpu/cpu<N>/cpufreq/{cpuinfo_min_freq,cpuinfo_max_freq,scaling_cur_freq};
// CPUs without cpufreq are left out.
std::vector<FrequencyInfo> ReadFrequencyInfo(const std::string& sys_cpu_dir, const std::vector<int>& cpus);
// /sys/devices/system/node/node<N> directories (0 when the directory is absent).
int CountNumaNodes(const std::string& sys_node_dir);

// MSR_SMI_COUNT (Intel: the number of SMIs since reset) per CPU, through
// the msr driver's /dev/cpu/<N>/msr (pread at the register's number).
// Opened once, while the recorder still has CAP_SYS_RAWIO; read later
// through the open descriptors.
class SmiCounters {
 public:
  static constexpr uint64_t kMsrSmiCount = 0x34;
  // `why_not` is set when no CPU's counter can be read.
  static SmiCounters Open(const std::string& dev_cpu_dir, const std::vector<int>& cpus);
  bool available() const { return !fds_.empty(); }
  const std::string& why_not() const { return why_not_; }
  // The counters now (CPUs whose read failed are left out).
  std::map<int, uint64_t> Read() const;

 private:
  std::map<int, UniqueFd> fds_;
  std::string why_not_;
};

}  // namespace gpunoise::collect
