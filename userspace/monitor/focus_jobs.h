// Which jobs the focus processes belong to, for the monitor's
// gpunoise_focus_job_processes{slurm_job_id} series (so Prometheus can
// compare a SLURM job's nodes with each other, as kube-state-metrics lets
// it do for Kubernetes jobs) and for matching job-level alerts
// (record_trigger.h). The SLURM job comes from the cgroup path slurmstepd
// puts every task in (".../job_<id>/step_<n>/..."): /proc/PID/cgroup is
// readable whatever the process's owner, also after the monitor dropped
// its capabilities, where another user's environment is not. The
// environment (SLURM_JOB_ID, TORCHELASTIC_RUN_ID) is read only for
// processes whose cgroup names no job, and only when it is readable.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gpunoise::monitor {

struct FocusJobs {
  std::map<std::string, uint64_t> slurm;  // SLURM job id (digits) -> focus processes in its cgroup
  std::set<std::string> ids;              // every job a focus process belongs to (cgroup, else environment)
};

FocusJobs ReadFocusJobs(const std::set<int>& pids, const std::string& proc_root = "/proc");

// At most `limit` series: the jobs with the most focus processes (ties by
// id) keep their own; the rest are summed under "other", so a node that
// runs many small jobs cannot blow up the series count.
std::vector<std::pair<std::string, uint64_t>> BoundedJobSeries(const std::map<std::string, uint64_t>& jobs,
                                                               size_t limit);
inline constexpr size_t kMaxJobSeries = 16;

}  // namespace gpunoise::monitor
