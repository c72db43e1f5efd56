#include "collect/environ_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <optional>

#include "collect/cgroup_cpu_stat.h"
#include "collect/cgroup_identity.h"
#include "common/files.h"
#include "common/strings.h"
#include "common/unique_fd.h"

namespace gpunoise::collect {
namespace {

std::optional<int32_t> Number(const std::map<std::string_view, std::string_view>& env,
                              std::string_view name) {
  auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  auto n = ParseInt64(Trim(it->second));
  if (!n || *n < 0 || *n > 0x7fffffff) return std::nullopt;
  return static_cast<int32_t>(*n);
}

// nullopt: the file could not be opened (another user's environ without
// CAP_SYS_PTRACE, a process that exited).
std::optional<std::string> ReadBoundedOrFail(const std::string& path, size_t limit) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  std::string out(limit, '\0');
  size_t got = 0;
  while (got < limit) {
    ssize_t n = ::read(fd.get(), out.data() + got, limit - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  return out;
}

std::string ReadBounded(const std::string& path, size_t limit) {
  return ReadBoundedOrFail(path, limit).value_or(std::string());
}

bool NamespaceDiffers(const std::string& proc_pid_dir, const char* ns) {
  char a[64], b[64];
  std::string mine = std::string("/proc/self/ns/") + ns, theirs = proc_pid_dir + "/ns/" + ns;
  ssize_t n = ::readlink(theirs.c_str(), a, sizeof(a));
  ssize_t m = ::readlink(mine.c_str(), b, sizeof(b));
  return n > 0 && m > 0 && std::string_view(a, static_cast<size_t>(n)) != std::string_view(b, static_cast<size_t>(m));
}

}  // namespace

model::JobIdentity ParseJobEnviron(std::string_view environ) {
  std::map<std::string_view, std::string_view> env;
  for (std::string_view entry : Split(environ, '\0')) {
    auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  model::JobIdentity job;
  struct Scheme {
    std::string_view rank, local_rank, size;
  };
  // In order of preference: under srun + torchrun, SLURM_PROCID is the
  // launcher's task and RANK the training process's.
  constexpr Scheme kSchemes[] = {
      {"RANK", "LOCAL_RANK", "WORLD_SIZE"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
  };
  for (const Scheme& s : kSchemes) {
    if (!job.rank) job.rank = Number(env, s.rank);
    if (!job.local_rank) job.local_rank = Number(env, s.local_rank);
    if (!job.world_size) job.world_size = Number(env, s.size);
  }
  for (std::string_view name : {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"}) {
    auto it = env.find(name);
    if (it != env.end() && !Trim(it->second).empty()) {
      job.job_id = std::string(Trim(it->second));
      break;
    }
  }
  return job;
}

void ReadProcessIdentity(const std::string& proc_pid_dir, model::ProcessIdentity* id) {
  auto cgroup = ReadFileToString(proc_pid_dir + "/cgroup");
  if (cgroup.ok()) {
    std::vector<CgroupLine> lines = ParseProcCgroup(*cgroup);
    id->cgroups = CgroupPaths(lines);
    id->container = IdentifyContainer(lines);
    // Throttling matters for the noisy-neighbour finding: only for
    // processes in a container, pod or job.
    if (!id->container.empty()) id->cpu_stat = ReadCgroupThrottling(id->cgroups, HostThrottlingMounts());
  }
  std::optional<std::string> environ = ReadBoundedOrFail(proc_pid_dir + "/environ", kMaxEnvironBytes);
  id->environ_unreadable = !environ;
  id->job = ParseJobEnviron(environ.value_or(std::string()));
  // Pod name and namespace without a kubelet client: kubelet writes the
  // pod's name as its hostname and mounts the service account's namespace.
  // Only a process with a root and a hostname of its own has them: one that
  // shares the host's (hostNetwork, or a test's hand-made pod) would read
  // the host's.
  if (!id->container.pod_uid.empty() && NamespaceDiffers(proc_pid_dir, "uts") &&
      NamespaceDiffers(proc_pid_dir, "mnt")) {
    std::string root = proc_pid_dir + "/root";
    id->container.pod_name = std::string(Trim(ReadBounded(root + "/etc/hostname", 256)));
    id->container.pod_namespace = std::string(
        Trim(ReadBounded(root + "/var/run/secrets/kubernetes.io/serviceaccount/namespace", 256)));
  }
  // A SLURM job the environment does not name (a task started by hand in
  // the job's cgroup) still has the cgroup's.
  if (id->job.job_id.empty()) id->job.job_id = id->container.slurm_job_id;
}

}  // namespace gpunoise::collect
