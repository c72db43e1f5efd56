#include "analyze/focus.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "analyze/interference_detector.h"
#include "common/strings.h"

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

Result<FocusSelection> SelectFocus(const Timeline& t, const GpuModel& gpu, const Thresholds& th,
                                   const std::vector<std::string>& requested,
                                   const CgroupResolver& cgroups, uint64_t from, uint64_t to) {
  FocusSelection sel;
  if (!requested.empty()) {
    for (const std::string& item : requested) {
      std::vector<int32_t> tids;
      if (auto pid = ParseInt64(item); pid && *pid > 0) {
        tids = ThreadsOf(t, static_cast<int32_t>(*pid));
        if (tids.empty()) return MakeError("--focus {}: no thread or process {} in this trace", item, item);
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
