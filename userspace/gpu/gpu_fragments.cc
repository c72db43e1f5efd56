#include "gpu/gpu_fragments.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "common/files.h"
#include "export/perfetto/trace_merger.h"
#include "model/gpu_capture.h"

namespace gpunoise::gpu {

Result<std::vector<std::string>> ListGpuFragments(const std::string& dir, uint64_t from_ts,
                                                  uint64_t to_ts) {
  GN_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(dir));
  std::vector<std::tuple<int, uint64_t, std::string>> found;
  for (const auto& name : names) {
    auto parsed = model::ParseFragmentFileName(name);
    if (!parsed) continue;
    if (parsed->flush_ts < from_ts) continue;
    if (to_ts && parsed->flush_ts > to_ts) continue;
    found.emplace_back(parsed->pid, parsed->flush_ts, dir + "/" + name);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [pid, ts, path] : found) out.push_back(std::move(path));
  return out;
}

FragmentsAppended AppendGpuFragments(const std::vector<std::string>& files,
                                     perfetto::TraceMerger& merger) {
  FragmentsAppended result;
  std::set<int> pids;
  for (const auto& path : files) {
    uint64_t before = merger.packets();
    auto appended = merger.Append(path);
    result.packets += merger.packets() - before;
    ++result.files;
    auto slash = path.rfind('/');
    if (auto name = model::ParseFragmentFileName(slash == std::string::npos ? path : path.substr(slash + 1)))
      pids.insert(name->pid);
    if (!appended.ok()) result.problems.push_back(appended.error().message);
  }
  result.processes = pids.size();
  return result;
}

}  // namespace gpunoise::gpu
