#include "monitor/focus_jobs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "collect/cgroup_identity.h"
#include "collect/environ_identity.h"
#include "common/files.h"
#include "common/unique_fd.h"

namespace gpunoise::monitor {
namespace {

// Empty when unreadable (another user's environment after the capability
// drop, a process that exited).
std::string ReadEnviron(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return {};
  std::string out(collect::kMaxEnvironBytes, '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd.get(), out.data() + got, out.size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace

FocusJobs ReadFocusJobs(const std::set<int>& pids, const std::string& proc_root) {
  FocusJobs out;
  for (int pid : pids) {
    std::string dir = proc_root + "/" + std::to_string(pid);
    auto cgroup = ReadFileToString(dir + "/cgroup");
    if (!cgroup.ok()) continue;  // exited since the focus was resolved
    model::ContainerIdentity c = collect::IdentifyContainer(collect::ParseProcCgroup(*cgroup));
    if (!c.slurm_job_id.empty()) {
      ++out.slurm[c.slurm_job_id];
      out.ids.insert(c.slurm_job_id);
      continue;
    }
    std::string job = collect::ParseJobEnviron(ReadEnviron(dir + "/environ")).job_id;
    if (!job.empty()) out.ids.insert(job);
  }
  return out;
}

std::vector<std::pair<std::string, uint64_t>> BoundedJobSeries(const std::map<std::string, uint64_t>& jobs,
                                                               size_t limit) {
  std::vector<std::pair<std::string, uint64_t>> all(jobs.begin(), jobs.end());
  if (all.size() <= limit || limit == 0) return all;
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  uint64_t other = 0;
  for (size_t i = limit - 1; i < all.size(); ++i) other += all[i].second;
  all.resize(limit - 1);
  std::sort(all.begin(), all.end());
  all.emplace_back("other", other);
  return all;
}

}  // namespace gpunoise::monitor
