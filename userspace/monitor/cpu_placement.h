// Where the monitor's own work runs. A node tuned for training keeps some
// CPUs free of housekeeping (isolcpus, nohz_full): a monitor that samples
// them at 49 Hz, or whose timers and threads wake there, adds the very noise
// it is meant to find. So by default the sampler stays off isolated CPUs and
// the monitor's threads run on the housekeeping CPUs only.
#pragma once

#include <string>
#include <vector>

namespace gpunoise::monitor {

struct CpuIsolation {
  std::vector<int> isolated;   // /sys/devices/system/cpu/isolated (isolcpus)
  std::vector<int> nohz_full;  // /sys/devices/system/cpu/nohz_full
  std::vector<int> All() const;  // both, sorted, once each
};

// From SYSFS/devices/system/cpu/{isolated,nohz_full}; SYSFS is /sys, or the
// directory GPUNOISE_SYSFS_ROOT names (tests: this VM isolates no CPU).
CpuIsolation ReadCpuIsolation();
CpuIsolation ReadCpuIsolation(const std::string& sysfs_root);

// The sampler's CPUs: `wanted` less the isolated ones unless `include_isolated`.
std::vector<int> SamplerCpus(const std::vector<int>& wanted, const CpuIsolation& iso, bool include_isolated);

// The CPUs for the monitor's own threads: `online` less the isolated, the
// nohz_full and the focus CPUs. Empty when that leaves none (then the
// monitor keeps the affinity it was given).
std::vector<int> HousekeepingCpus(const std::vector<int>& online, const CpuIsolation& iso,
                                  const std::vector<int>& focus_cpus);

// Moves every thread of this process onto `cpus`. False, with errno set,
// when the kernel refuses.
bool PinProcessTo(const std::vector<int>& cpus);

}  // namespace gpunoise::monitor
