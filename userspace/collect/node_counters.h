// Node-wide counters the scheduler data cannot show by itself, read from
// /proc and the cgroup file systems: per-CPU steal time (/proc/stat) and the
// CFS bandwidth figures of every cgroup that has a CPU quota (v1
// cpu.cfs_quota_us / cpu.stat, v2 cpu.max / cpu.stat), with the processes
// those quotas apply to. Parsers are pure, for tests; readers take a root
// directory, so tests can point them at a stand-in tree.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/node_counters.h"

namespace gpunoise::collect {

// Steal ns per CPU from /proc/stat text ("cpuN user nice system idle iowait
// irq softirq steal ..."), in USER_HZ ticks converted with `ns_per_tick`.
std::map<uint32_t, uint64_t> ParseProcStatSteal(std::string_view text, uint64_t ns_per_tick);

using CpuStat = model::CgroupCpuStat;
// cpu.stat of v1 (throttled_time) or v2 (throttled_usec); nullopt when it
// has neither (the cgroup has no bandwidth control).
std::optional<CpuStat> ParseCpuStat(std::string_view text);

// v2 cpu.max ("max 100000" or "20000 100000"): quota and period in us;
// quota 0 when unlimited.
bool ParseCpuMax(std::string_view text, uint64_t* quota_us, uint64_t* period_us);

struct QuotaCgroup {
  std::string path;  // "/" + relative to its hierarchy's mount ("/gn-test/job")
  std::string dir;   // absolute directory
  int version = 1;
  uint64_t quota_us = 0, period_us = 0;
};

// Cgroups with a CPU quota below `root` (a v1 cpu controller mount or the v2
// mount), at most `max_cgroups` (a node with many pods has many).
std::vector<QuotaCgroup> FindQuotaCgroups(const std::string& root, int version, size_t max_cgroups = 4096);

// The v1 mount point that has the cpu controller, and the v2 mount when its
// root offers the cpu controller ("" when absent), from mountinfo text.
struct CpuCgroupMounts {
  std::string v1_cpu;
  std::string v2;
  bool v2_has_cpu = false;
};
CpuCgroupMounts ParseCpuCgroupMounts(std::string_view mountinfo, std::string_view v2_controllers);
CpuCgroupMounts ReadCpuCgroupMounts();

// The processes (cgroup.procs) in `dir` and every cgroup below it: the quota
// of `dir` applies to all of them.
std::vector<int32_t> CgroupProcessesBelow(const std::string& dir, size_t max_pids = 65536);

// Every thread's CPU affinity (sched_getaffinity), by tid, from /proc:
// one syscall per thread, no file reads.
std::map<int32_t, std::vector<int>> ReadThreadAffinities(size_t max_threads = 65536);

}  // namespace gpunoise::collect
