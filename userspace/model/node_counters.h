// Node-wide counters sampled during a recording (record/node_recording.h):
// per-CPU steal time and the CFS bandwidth figures of cgroups with a CPU
// quota. Cumulative values as the kernel keeps them; deltas are taken by
// whoever writes or reads them.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace gpunoise::model {

struct CgroupCpuStat {
  uint64_t nr_periods = 0;
  uint64_t nr_throttled = 0;
  uint64_t throttled_ns = 0;  // v1 throttled_time (ns), v2 throttled_usec * 1000
};

struct NodeSnapshot {
  uint64_t ts = 0;  // CLOCK_BOOTTIME
  std::map<uint32_t, uint64_t> steal_ns;             // per CPU, since boot
  std::map<std::string, CgroupCpuStat> cgroups;      // by cgroup path, since its creation
};

}  // namespace gpunoise::model
