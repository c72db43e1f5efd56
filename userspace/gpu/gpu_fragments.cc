#include "gpu/gpu_fragments.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "common/files.h"
#include "export/perfetto/trace_merger.h"
#include "gpu/cupti_drops.h"
#include "model/gpu_capture.h"

namespace gpunoise::gpu {
namespace {

int PidOf(const std::string& path) {
  auto slash = path.rfind('/');
  auto name = model::ParseFragmentFileName(slash == std::string::npos ? path : path.substr(slash + 1));
  return name ? name->pid : -1;
}

// Each process's CUPTI dropped-record count as of its last fragment in
// `files` that states one. The count only grows, and a fragment states it
// only when it changed, so the latest fragment that states it has it.
std::map<int, uint64_t> LatestDropCounts(const std::vector<std::string>& files) {
  std::map<int, uint64_t> out;
  // `files` is ordered by process, then time: walk it backwards.
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    int pid = PidOf(*it);
    if (out.count(pid)) continue;
    if (auto n = CuptiDroppedRecordsIn(*it)) out[pid] = *n;
  }
  return out;
}

}  // namespace

Result<FragmentWindow> ListFragmentWindow(const std::string& dir, uint64_t from_ts, uint64_t to_ts) {
  GN_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(dir));
  std::vector<std::tuple<int, uint64_t, std::string>> in, before;
  FragmentWindow out;
  for (const auto& name : names) {
    auto parsed = model::ParseFragmentFileName(name);
    if (!parsed) continue;
    if (parsed->flush_ts < from_ts) before.emplace_back(parsed->pid, parsed->flush_ts, dir + "/" + name);
    else if (to_ts && parsed->flush_ts > to_ts) ++out.late;
    else in.emplace_back(parsed->pid, parsed->flush_ts, dir + "/" + name);
  }
  std::sort(in.begin(), in.end());
  std::sort(before.begin(), before.end());
  for (auto& [pid, ts, path] : in) out.files.push_back(std::move(path));
  for (auto& [pid, ts, path] : before) out.before.push_back(std::move(path));
  return out;
}

Result<std::vector<std::string>> ListGpuFragments(const std::string& dir, uint64_t from_ts,
                                                  uint64_t to_ts) {
  GN_ASSIGN_OR_RETURN(FragmentWindow window, ListFragmentWindow(dir, from_ts, to_ts));
  return std::move(window.files);
}

FragmentsAppended AppendGpuFragments(const std::vector<std::string>& files,
                                     perfetto::TraceMerger& merger,
                                     const std::vector<std::string>& before) {
  FragmentsAppended result;
  std::set<int> pids;
  for (const auto& path : files) {
    uint64_t before_packets = merger.packets();
    auto appended = merger.Append(path);
    uint64_t added = merger.packets() - before_packets;
    result.packets += added;
    ++result.files;
    if (int pid = PidOf(path); pid >= 0) pids.insert(pid);
    if (!appended.ok()) {
      // Nothing of it in the trace, or the part before the damage.
      if (added == 0) ++result.unreadable;
      else ++result.truncated;
      result.problems.push_back(appended.error().message);
    }
  }
  result.processes = pids.size();
  std::map<int, uint64_t> at_end = LatestDropCounts(files);
  std::map<int, uint64_t> at_start = LatestDropCounts(before);
  for (const auto& [pid, n] : at_end) {
    uint64_t start = at_start.count(pid) ? at_start[pid] : 0;
    if (n > start) result.cupti_dropped_records += n - start;
  }
  return result;
}

}  // namespace gpunoise::gpu
