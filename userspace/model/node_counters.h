// Node-wide counters sampled during a recording (record/node_recording.h):
// per-CPU steal time and the CFS bandwidth figures of cgroups with a CPU
// quota. Cumulative values as the kernel keeps them; deltas are taken by
// whoever writes or reads them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace gpunoise::model {

struct CgroupCpuStat {
  uint64_t nr_periods = 0;
  uint64_t nr_throttled = 0;
  uint64_t throttled_ns = 0;  // v1 throttled_time (ns), v2 throttled_usec * 1000
};

struct NodeSnapshot {
  uint64_t ts = 0;  // CLOCK_BOOTTIME
  std::map<uint32_t, uint64_t> steal_ns;             // per CPU, since boot
  // When steal_ns was read, where that was before `ts` (a sample that did
  // not read /proc/stat carries the last reading); 0: at `ts`.
  uint64_t steal_ts = 0;
  std::map<std::string, CgroupCpuStat> cgroups;      // by cgroup path, since its creation
  // The kernel's trouble counters by file ("softlockup_count"), since boot:
  // those this kernel has (collect/kernel_health.h).
  std::map<std::string, uint64_t> kernel_health;
};

}  // namespace gpunoise::model

namespace gpunoise::model {

// A task stalled in memory reclaim or compaction (bpf/memstall.h).
enum class MemStallKind : uint8_t {
  kDirectReclaim = 0,
  kMemcgReclaim = 1,
  kCompaction = 2,
  kThrottled = 3,
  kDirtyThrottle = 4,  // balance_dirty_pages: a writer paused for its dirty pages
};
std::string_view MemStallName(MemStallKind kind);  // "direct reclaim", "memcg reclaim", ...

struct MemStall {
  uint64_t begin = 0, end = 0;  // CLOCK_BOOTTIME
  uint64_t value = 0;           // nr_reclaimed, compaction status, throttle reason
  int32_t tid = 0;
  uint32_t cpu = 0;
  MemStallKind kind = MemStallKind::kDirectReclaim;
};

}  // namespace gpunoise::model
