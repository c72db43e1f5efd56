#include "doctor/focus.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/cpu_list.h"
#include "doctor/cpu_set.h"

namespace gpunoise::doctor {

std::string_view FocusSourceName(FocusSource source) {
  switch (source) {
    case FocusSource::kNone: return "none";
    case FocusSource::kCpuList: return "focus-cpus";
    case FocusSource::kPids: return "focus-pids";
    case FocusSource::kGpuProcesses: return "gpu-processes";
    case FocusSource::kIsolatedCpus: return "isolated-cpus";
  }
  return "none";
}

bool DescendsFrom(int pid, const std::vector<int>& roots, const std::vector<ProcessInfo>& processes) {
  std::map<int, int> parent;
  for (const auto& p : processes) parent[p.pid] = p.ppid;
  for (int hops = 0; pid > 0 && hops < 4096; ++hops) {
    if (std::find(roots.begin(), roots.end(), pid) != roots.end()) return true;
    auto it = parent.find(pid);
    if (it == parent.end()) return false;
    pid = it->second;
  }
  return false;
}

Result<Focus> ResolveFocus(const FocusRequest& request, const std::vector<ProcessInfo>& processes,
                           const Isolation& isolation, const std::vector<int>& online_cpus) {
  Focus f;
  auto find = [&](int pid) -> const ProcessInfo* {
    for (const auto& p : processes)
      if (p.pid == pid) return &p;
    return nullptr;
  };
  if (!request.cpus.empty()) {
    f.cpus = request.cpus;
    f.source = FocusSource::kCpuList;
    f.pids = request.pids;
    f.description = fmt::format("CPUs {} (--focus-cpus)", FormatCpuList(f.cpus));
    return f;
  }
  if (!request.pids.empty()) {
    std::vector<std::string> names;
    for (int pid : request.pids) {
      const ProcessInfo* p = find(pid);
      if (!p) return MakeError("failed to find process {}: no such process", pid);
      if (!p->cpus_allowed) return MakeError("failed to read the CPU affinity of process {}", pid);
      f.cpus = Union(f.cpus, *p->cpus_allowed);
      names.push_back(fmt::format("{} ({})", pid, p->comm));
    }
    f.source = FocusSource::kPids;
    f.pids = request.pids;
    f.description = fmt::format("CPUs {}: where {} may run (--focus)", FormatCpuList(f.cpus), fmt::join(names, ", "));
    return f;
  }
  std::vector<std::string> names;
  for (const auto& p : processes) {
    if (!p.RunsGpuWork() || !p.cpus_allowed) continue;
    // Every GPU user counts (a launcher and its ranks may all hold the
    // device files); their descendants count through DescendsFrom.
    f.cpus = Union(f.cpus, *p.cpus_allowed);
    f.pids.push_back(p.pid);
    if (names.size() < 4) names.push_back(fmt::format("{} ({})", p.pid, p.comm));
  }
  if (!f.pids.empty()) {
    f.source = FocusSource::kGpuProcesses;
    std::string more = f.pids.size() > names.size() ? fmt::format(" and {} more", f.pids.size() - names.size()) : "";
    f.description = fmt::format("CPUs {}: where {} process(es) using GPUs may run: {}{}", FormatCpuList(f.cpus),
                                f.pids.size(), fmt::join(names, ", "), more);
    return f;
  }
  std::vector<int> isolated = isolation.NonHousekeeping();
  if (!online_cpus.empty()) isolated = Intersect(isolated, online_cpus);
  if (!isolated.empty()) {
    f.cpus = isolated;
    f.source = FocusSource::kIsolatedCpus;
    f.description = fmt::format("CPUs {}: isolated from housekeeping (isolcpus/nohz_full)", FormatCpuList(f.cpus));
    return f;
  }
  f.description = "none: no process uses a GPU and no CPU is isolated (give --focus-cpus or --focus)";
  return f;
}

}  // namespace gpunoise::doctor
