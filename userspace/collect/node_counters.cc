#include "collect/node_counters.h"

#include <sched.h>

#include <filesystem>
#include <system_error>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {

namespace fs = std::filesystem;

std::map<uint32_t, uint64_t> ParseProcStatSteal(std::string_view text, uint64_t ns_per_tick) {
  std::map<uint32_t, uint64_t> out;
  for (std::string_view line : Split(text, '\n')) {
    // "cpu " is the sum of all CPUs: only the per-CPU lines count.
    if (line.size() < 4 || !StartsWith(line, "cpu") || line[3] < '0' || line[3] > '9') continue;
    std::vector<std::string_view> f;
    for (std::string_view w : Split(line, ' '))
      if (!w.empty()) f.push_back(w);
    // steal is the 8th value after the name (proc(5)), since Linux 2.6.11.
    if (f.size() < 9) continue;
    auto cpu = ParseUint64(f[0].substr(3));
    auto steal = ParseUint64(f[8]);
    if (!cpu || !steal) continue;
    out[static_cast<uint32_t>(*cpu)] = *steal * ns_per_tick;
  }
  return out;
}

std::optional<CpuStat> ParseCpuStat(std::string_view text) {
  CpuStat s;
  bool has_throttled = false;
  for (std::string_view line : Split(text, '\n')) {
    auto f = Split(Trim(line), ' ');
    if (f.size() != 2) continue;
    auto v = ParseUint64(f[1]);
    if (!v) continue;
    if (f[0] == "nr_periods") s.nr_periods = *v;
    else if (f[0] == "nr_throttled") s.nr_throttled = *v;
    else if (f[0] == "throttled_time") s.throttled_ns = *v, has_throttled = true;           // v1: ns
    else if (f[0] == "throttled_usec") s.throttled_ns = *v * 1000, has_throttled = true;   // v2: us
  }
  if (!has_throttled) return std::nullopt;
  return s;
}

bool ParseCpuMax(std::string_view text, uint64_t* quota_us, uint64_t* period_us) {
  auto f = Split(Trim(text), ' ');
  if (f.size() != 2) return false;
  auto period = ParseUint64(f[1]);
  if (!period || !*period) return false;
  *period_us = *period;
  if (f[0] == "max") {
    *quota_us = 0;
    return true;
  }
  auto quota = ParseUint64(f[0]);
  if (!quota) return false;
  *quota_us = *quota;
  return true;
}

namespace {

std::optional<QuotaCgroup> ReadQuota(const fs::path& dir, const fs::path& root, int version) {
  QuotaCgroup q;
  q.version = version;
  q.dir = dir.string();
  std::string rel = fs::relative(dir, root).generic_string();
  q.path = rel == "." ? "/" : "/" + rel;
  if (version == 2) {
    auto max = ReadFileToString((dir / "cpu.max").string());
    if (!max.ok() || !ParseCpuMax(*max, &q.quota_us, &q.period_us) || !q.quota_us) return std::nullopt;
    return q;
  }
  auto quota = ReadFileToString((dir / "cpu.cfs_quota_us").string());
  auto period = ReadFileToString((dir / "cpu.cfs_period_us").string());
  if (!quota.ok() || !period.ok()) return std::nullopt;
  auto qv = ParseInt64(Trim(*quota));
  auto pv = ParseUint64(Trim(*period));
  if (!qv || *qv <= 0 || !pv || !*pv) return std::nullopt;  // -1: no quota
  q.quota_us = static_cast<uint64_t>(*qv);
  q.period_us = *pv;
  return q;
}

}  // namespace

std::vector<QuotaCgroup> FindQuotaCgroups(const std::string& root, int version, size_t max_cgroups) {
  std::vector<QuotaCgroup> out;
  if (root.empty()) return out;
  std::error_code ec;
  fs::path base(root);
  if (auto q = ReadQuota(base, base, version)) out.push_back(*q);
  // Cgroups appear and go while we walk: errors skip the entry.
  fs::recursive_directory_iterator it(base, fs::directory_options::skip_permission_denied, ec), end;
  size_t visited = 0;
  for (; !ec && it != end && out.size() < max_cgroups && visited < 16 * max_cgroups; it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    ++visited;
    if (auto q = ReadQuota(it->path(), base, version)) out.push_back(*q);
  }
  return out;
}

CpuCgroupMounts ParseCpuCgroupMounts(std::string_view mountinfo, std::string_view v2_controllers) {
  CpuCgroupMounts m;
  for (std::string_view line : Split(mountinfo, '\n')) {
    // "... <mount point> <options> - <fstype> <source> <super options>"
    auto dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    auto after = Split(line.substr(dash + 3), ' ');
    auto before = Split(line.substr(0, dash), ' ');
    if (after.size() < 3 || before.size() < 5) continue;
    if (after[0] == "cgroup2" && m.v2.empty()) m.v2 = std::string(before[4]);
    if (after[0] == "cgroup" && m.v1_cpu.empty())
      for (std::string_view opt : Split(after[2], ','))
        if (opt == "cpu") m.v1_cpu = std::string(before[4]);
  }
  for (std::string_view c : Split(Trim(v2_controllers), ' '))
    if (c == "cpu") m.v2_has_cpu = true;
  return m;
}

CpuCgroupMounts ReadCpuCgroupMounts() {
  auto info = ReadFileToString("/proc/self/mountinfo");
  if (!info.ok()) return {};
  CpuCgroupMounts m = ParseCpuCgroupMounts(*info, "");
  if (!m.v2.empty()) {
    auto controllers = ReadFileToString(m.v2 + "/cgroup.controllers");
    if (controllers.ok()) m = ParseCpuCgroupMounts(*info, *controllers);
  }
  return m;
}

std::vector<int32_t> CgroupProcessesBelow(const std::string& dir, size_t max_pids) {
  std::vector<int32_t> out;
  auto add = [&](const fs::path& d) {
    auto procs = ReadFileToString((d / "cgroup.procs").string());
    if (!procs.ok()) return;
    for (std::string_view line : Split(*procs, '\n'))
      if (auto pid = ParseInt64(Trim(line)); pid && *pid > 0 && out.size() < max_pids)
        out.push_back(static_cast<int32_t>(*pid));
  };
  std::error_code ec;
  add(dir);
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end && out.size() < max_pids; it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec)) add(it->path());
  return out;
}

std::map<int32_t, std::vector<int>> ReadThreadAffinities(size_t max_threads) {
  std::map<int32_t, std::vector<int>> out;
  std::error_code ec;
  for (fs::directory_iterator p("/proc", ec), end; !ec && p != end && out.size() < max_threads; p.increment(ec)) {
    auto pid = ParseInt64(p->path().filename().string());
    if (!pid) continue;
    std::error_code tec;
    for (fs::directory_iterator t(p->path() / "task", tec); !tec && t != end && out.size() < max_threads;
         t.increment(tec)) {
      auto tid = ParseInt64(t->path().filename().string());
      if (!tid) continue;
      cpu_set_t set;
      CPU_ZERO(&set);
      if (::sched_getaffinity(static_cast<pid_t>(*tid), sizeof(set), &set) != 0) continue;  // exited
      std::vector<int> cpus;
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
      out.emplace(static_cast<int32_t>(*tid), std::move(cpus));
    }
  }
  return out;
}

}  // namespace gpunoise::collect
