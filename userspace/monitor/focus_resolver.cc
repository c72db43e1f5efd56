#include "monitor/focus_resolver.h"

#include <map>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::monitor {
namespace {

struct ProcEntry {
  int ppid = 0;
  std::string comm;
};

// pid -> (ppid, comm) from /proc/PID/stat. The comm sits in parentheses
// and may itself hold spaces and parentheses, so the fields after it are
// found from the last ')'.
std::map<int, ProcEntry> ScanStat(const std::string& proc_root) {
  std::map<int, ProcEntry> out;
  auto entries = ListDirectory(proc_root);
  if (!entries.ok()) return out;
  for (const std::string& name : *entries) {
    auto pid = ParseInt64(name);
    if (!pid || *pid <= 0) continue;
    auto stat = ReadFileToString(proc_root + "/" + name + "/stat");
    if (!stat.ok()) continue;  // exited meanwhile
    std::string_view s = *stat;
    size_t open = s.find('('), close = s.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) continue;
    ProcEntry e;
    e.comm = std::string(s.substr(open + 1, close - open - 1));
    auto fields = Split(Trim(s.substr(close + 1)), ' ');
    if (fields.size() >= 2)
      if (auto ppid = ParseInt64(fields[1])) e.ppid = static_cast<int>(*ppid);
    out.emplace(static_cast<int>(*pid), std::move(e));
  }
  return out;
}

void AddCgroupProcs(const std::string& dir, int depth, std::set<int>* out) {
  if (auto procs = ReadFileToString(dir + "/cgroup.procs"); procs.ok())
    for (std::string_view line : Split(*procs, '\n'))
      if (auto pid = ParseInt64(Trim(line)); pid && *pid > 0) out->insert(static_cast<int>(*pid));
  if (depth >= 16) return;  // deeper than any real hierarchy
  auto entries = ListDirectory(dir);
  if (!entries.ok()) return;
  for (const std::string& name : *entries)
    if (PathExists(dir + "/" + name + "/cgroup.procs")) AddCgroupProcs(dir + "/" + name, depth + 1, out);
}

}  // namespace

FocusResolution ResolveFocus(const std::vector<std::string>& specs, const std::string& proc_root,
                             const std::string& cgroup_root) {
  FocusResolution r;
  if (specs.empty()) return r;
  std::map<int, ProcEntry> procs;
  bool scanned = false;
  auto scan = [&]() -> const std::map<int, ProcEntry>& {
    if (!scanned) procs = ScanStat(proc_root);
    scanned = true;
    return procs;
  };
  std::set<int> roots;
  for (const std::string& spec : specs) {
    if (StartsWith(spec, "comm:")) {
      std::string_view name = std::string_view(spec).substr(5);
      for (const auto& [pid, e] : scan())
        if (e.comm == name) r.processes.insert(pid);
    } else if (StartsWith(spec, "cgroup:")) {
      std::string path = spec.substr(7);
      if (!StartsWith(path, "/")) path = "/" + path;
      if (!StartsWith(path, cgroup_root + "/") && path != cgroup_root) path = cgroup_root + path;
      AddCgroupProcs(path, 0, &r.processes);
    } else if (auto pid = ParseInt64(spec); pid && *pid > 0) {
      roots.insert(static_cast<int>(*pid));
    }
  }
  if (!roots.empty()) {
    const auto& all = scan();
    for (int root : roots)
      if (all.count(root)) r.processes.insert(root);
    // Descendants: walk each process's parents up to a root (or init).
    for (const auto& [pid, e] : all) {
      int p = e.ppid;
      for (int hops = 0; p > 1 && hops < 64; ++hops) {
        if (roots.count(p)) {
          r.processes.insert(pid);
          break;
        }
        auto it = all.find(p);
        if (it == all.end()) break;
        p = it->second.ppid;
      }
    }
  }
  for (int pid : r.processes) {
    r.ids.insert(static_cast<uint32_t>(pid));
    auto tasks = ListDirectory(proc_root + "/" + std::to_string(pid) + "/task");
    if (!tasks.ok()) continue;
    for (const std::string& t : *tasks)
      if (auto tid = ParseInt64(t); tid && *tid > 0) r.ids.insert(static_cast<uint32_t>(*tid));
  }
  return r;
}

}  // namespace gpunoise::monitor
