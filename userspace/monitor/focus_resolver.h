// Turns --focus specs into the ids the kernel's focus map holds: the tgid
// of every focus process and the tid of each of its threads. Done again
// every focus-refresh, so processes that start later (a training job's
// next run) become focus without a restart.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace gpunoise::monitor {

struct FocusResolution {
  std::set<int> processes;    // tgids
  std::set<uint32_t> ids;     // tgids and tids, for collect::FocusMap
};

// Specs: "PID" (that process and its descendants), "comm:NAME" (processes
// whose comm is NAME), "cgroup:PATH" (processes in that cgroup-v2
// directory or below; PATH is absolute under `cgroup_root` or relative to
// it). Specs that match nothing contribute nothing.
FocusResolution ResolveFocus(const std::vector<std::string>& specs, const std::string& proc_root = "/proc",
                             const std::string& cgroup_root = "/sys/fs/cgroup");

}  // namespace gpunoise::monitor
