// Which threads the report is about. `--focus` names them (PID, thread or
// process name, cgroup; pod:NAME, pod-uid:UID, container:ID or container:NAME, rank:N, job:ID
// from the identities the recorder kept); by default they are the threads that launch GPU
// work, or without GPU data the busiest non-kernel threads.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "analyze/gpu_model.h"
#include "analyze/thresholds.h"
#include "analyze/timeline.h"
#include "common/result.h"

namespace gpunoise::analyze {

// Resolves a cgroup path to the tids in it (the report does this live,
// from /sys/fs/cgroup; tests pass their own).
using CgroupResolver = std::function<Result<std::vector<int32_t>>(std::string_view cgroup)>;

struct FocusSelection {
  std::set<int32_t> tids;
  std::string how;  // "--focus 4242", "threads that launch GPU work", ...
};

// On-CPU time of every thread within [from, to).
std::vector<std::pair<int32_t, uint64_t>> BusiestThreads(const Timeline& t, uint64_t from, uint64_t to);

Result<FocusSelection> SelectFocus(const Timeline& t, const GpuModel& gpu, const Thresholds& th,
                                   const std::vector<std::string>& requested,
                                   const CgroupResolver& cgroups, uint64_t from, uint64_t to);

}  // namespace gpunoise::analyze
