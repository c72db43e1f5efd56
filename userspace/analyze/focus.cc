#include "analyze/focus.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "analyze/interference_detector.h"
#include "common/strings.h"
#include "model/container_selector.h"

namespace gpunoise::analyze {
namespace {

// Threads of process `pid` (by tgid), or the thread `pid` itself.
std::vector<int32_t> ThreadsOf(const Timeline& t, int32_t pid) {
  std::vector<int32_t> out;
  for (const ThreadInfo& th : t.thread_store)
    if (th.tid == pid || th.tgid == pid) out.push_back(th.tid);
  return out;
}

}  // namespace

std::vector<std::pair<int32_t, uint64_t>> BusiestThreads(const Timeline& t, uint64_t from, uint64_t to) {
  std::unordered_map<int32_t, uint64_t> on_cpu;
  for (const CpuTimeline& c : t.cpus)
    for (const RunSlice& r : c.runs) {
      if (r.tid <= 0 || r.end <= from || r.start >= to) continue;
      on_cpu[r.tid] += std::min(r.end, to) - std::max(r.start, from);
    }
  std::vector<std::pair<int32_t, uint64_t>> out(on_cpu.begin(), on_cpu.end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return out;
}

namespace {

// pod:NAME, pod-uid:UID, container:ID (a prefix of 12 digits or more, as
// runtimes abbreviate) or container:NAME (model/container_selector.h),
// rank:N, job:ID: resolved from the identities the recorder kept in the
// trace, so no live node is needed.
constexpr std::string_view kIdentityKinds[] = {"pod:", "pod-uid:", "container:", "container-name:", "rank:", "job:"};

bool IsIdentityFocus(std::string_view item) {
  for (std::string_view k : kIdentityKinds)
    if (StartsWith(item, k)) return true;
  return false;
}

bool IdentityMatches(const model::ProcessIdentity& id, std::string_view kind, std::string_view value) {
  const model::ContainerIdentity& c = id.container;
  if (kind == "pod:")
    return !c.pod_name.empty() && (c.pod_name == value || c.pod_namespace + "/" + c.pod_name == value);
  if (kind == "pod-uid:") return !c.pod_uid.empty() && c.pod_uid == value;
  if (kind == "rank:") return id.job.rank && std::to_string(*id.job.rank) == value;
  if (kind == "job:") return !id.job.job_id.empty() && id.job.job_id == value;
  return false;
}

Result<std::vector<int32_t>> IdentityFocus(const Timeline& t, std::string_view item) {
  auto colon = item.find(':');
  std::string_view kind = item.substr(0, colon + 1), value = item.substr(colon + 1);
  if (value.empty()) return MakeError("--focus {}: needs a value after '{}'", item, kind);
  std::optional<model::ContainerSelector> container;
  if (model::IsContainerSelector(item)) {
    std::string why;
    container = model::ParseContainerSelector(item, &why);
    if (!container) return MakeError("--focus {}: {}", item, why);
  }
  if (kind == "rank:" && !ParseInt64(value)) return MakeError("--focus {}: a rank is a number", item);
  if (t.identities.empty())
    return MakeError("--focus {}: this trace holds no container, pod or rank data (recorded before gpunoise "
                     "kept them, or by another recorder)", item);
  std::vector<int32_t> tids;
  size_t processes = 0;
  for (const auto& [pid, id] : t.identities) {
    if (container ? !container->Matches(id.container) : !IdentityMatches(id, kind, value)) continue;
    ++processes;
    for (int32_t tid : ThreadsOf(t, pid)) tids.push_back(tid);
  }
  if (tids.empty() && processes)
    return MakeError("--focus {}: its {} processes have no threads in this trace", item, processes);
  if (tids.empty() && container && !container->by_id())
    return MakeError("--focus {}: no process of this trace is in a {} (names come from the kubelet's log "
                     "tree when recording, --kubelet-log-dir; an id is at least 12 digits)",
                     item, container->Describe());
  if (tids.empty()) return MakeError("--focus {}: no process of this trace matches", item);
  return tids;
}

// Threads of the processes whose recorded cgroups (v2 paths, or v1
// "controllers:path") are `cgroup` or below it.
std::vector<int32_t> RecordedCgroupMembers(const Timeline& t, std::string_view cgroup) {
  std::string want(cgroup);
  if (!want.empty() && want.front() != '/') want = "/" + want;
  while (want.size() > 1 && want.back() == '/') want.pop_back();
  std::vector<int32_t> tids;
  for (const auto& [pid, id] : t.identities) {
    bool in = false;
    for (const std::string& line : id.cgroups) {
      std::string_view path = line;
      if (auto colon = path.find(":/"); colon != std::string_view::npos) path = path.substr(colon + 1);
      if (path == want || (StartsWith(path, want) && path.size() > want.size() && path[want.size()] == '/'))
        in = true;
    }
    if (in)
      for (int32_t tid : ThreadsOf(t, pid)) tids.push_back(tid);
  }
  return tids;
}

}  // namespace

Result<FocusSelection> SelectFocus(const Timeline& t, const GpuModel& gpu, const Thresholds& th,
                                   const std::vector<std::string>& requested,
                                   const CgroupResolver& cgroups, uint64_t from, uint64_t to) {
  FocusSelection sel;
  if (!requested.empty()) {
    for (const std::string& item : requested) {
      std::vector<int32_t> tids;
      if (IsIdentityFocus(item)) {
        GN_ASSIGN_OR_RETURN(tids, IdentityFocus(t, item));
      } else if (auto pid = ParseInt64(item); pid && *pid > 0) {
        tids = ThreadsOf(t, static_cast<int32_t>(*pid));
        if (tids.empty()) return MakeError("--focus {}: no thread or process {} in this trace", item, item);
      } else if (item.find('/') != std::string::npos && !(tids = RecordedCgroupMembers(t, item)).empty()) {
        // The cgroups the recorder saw each process in: no live node needed.
      } else if (item.find('/') != std::string::npos) {
        if (!cgroups) return MakeError("--focus {}: cgroups cannot be resolved here", item);
        GN_ASSIGN_OR_RETURN(std::vector<int32_t> members, cgroups(item));
        for (int32_t m : members)
          for (int32_t tid : ThreadsOf(t, m)) tids.push_back(tid);
        if (tids.empty())
          return MakeError("--focus {}: none of the cgroup's {} tasks appear in this trace", item, members.size());
      } else {
        for (const ThreadInfo& thr : t.thread_store) {
          bool named = thr.name == item;
          bool in_process = t.ProcessName(t.TgidOf(thr.tid)) == item;
          if (named || in_process) tids.push_back(thr.tid);
        }
        if (tids.empty()) return MakeError("--focus {}: no thread or process named '{}' in this trace", item, item);
      }
      sel.tids.insert(tids.begin(), tids.end());
    }
    sel.how = "--focus";
    for (const auto& item : requested) sel.how += " " + item;
    return sel;
  }
  if (!gpu.launch_tids.empty()) {
    sel.tids = gpu.launch_tids;
    sel.how = "threads that launch GPU work";
    return sel;
  }
  auto busiest = BusiestThreads(t, from, to);
  size_t max_threads = static_cast<size_t>(th.Get("focus.max_threads"));
  double min_share = th.Get("focus.min_busy_share");
  uint64_t top = 0;
  for (const auto& [tid, ns] : busiest) {
    if (sel.tids.size() >= max_threads) break;
    if (t.IsKernelThread(tid) || IsRecorderThread(t, tid)) continue;
    if (!top) top = ns;
    if (static_cast<double>(ns) < min_share * static_cast<double>(top)) break;
    sel.tids.insert(tid);
  }
  sel.how = fmt::format("no GPU data: the {} busiest non-kernel thread{}", sel.tids.size(),
                        sel.tids.size() == 1 ? "" : "s");
  return sel;
}

}  // namespace gpunoise::analyze
