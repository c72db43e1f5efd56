// Who a host process is beyond its pid: its pid namespace, the container and
// pod its cgroups say it runs in, and its rank and job from its environment
// (DESIGN.md decision 10: host identity is the truth, the rest are
// attributes of it). Filled from /proc and the kernel's fork records at
// record time, written into the trace as typed metadata
// (export/perfetto/identity_packets.h) and read back by the report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpunoise::model {

// Where the trace keeps them: one instant per process on this track, its
// args named in export/perfetto/identity_packets.h.
inline constexpr std::string_view kIdentityTrackName = "gpunoise processes";
inline constexpr std::string_view kIdentityEventName = "gpunoise process identity";

// The container runtime a cgroup path names.
enum class ContainerRuntime : uint8_t { kNone, kContainerd, kCrio, kDocker, kPodman, kUnknown };

// Kubernetes QoS class, from the kubepods slice or directory the pod is in.
enum class PodQos : uint8_t { kNone, kGuaranteed, kBurstable, kBestEffort };

struct ContainerIdentity {
  ContainerRuntime runtime = ContainerRuntime::kNone;
  std::string container_id;  // 64 hex digits, as the runtime names it
  std::string pod_uid;       // "0f1e...-..." with dashes, as the API server shows it
  PodQos qos = PodQos::kNone;
  std::string pod_name, pod_namespace;  // where they could be had; else empty
  std::string container_name;           // "prep", from the kubelet's log links; else empty
  std::string slurm_job_id;             // "job_<id>" in the cgroup path
  // The cgroup the ids came from ("/kubepods.slice/.../cri-containerd-ID.scope").
  std::string cgroup;
  bool empty() const {
    return runtime == ContainerRuntime::kNone && pod_uid.empty() && slurm_job_id.empty();
  }
};

// Rank and job of a distributed job's process, from its environment
// (RANK / LOCAL_RANK for torchrun and most launchers, SLURM_PROCID /
// SLURM_LOCALID / SLURM_JOB_ID under srun).
struct JobIdentity {
  std::optional<int32_t> rank;
  std::optional<int32_t> local_rank;
  std::optional<int32_t> world_size;
  std::string job_id;
  bool empty() const { return !rank && !local_rank && !world_size && job_id.empty(); }
};

// A cgroup's CPU bandwidth throttling (cpu.stat: v2 nr_periods,
// nr_throttled, throttled_usec; v1 the same with throttled_time in ns).
struct CgroupThrottling {
  bool valid = false;
  std::string file;  // the cpu.stat it came from
  uint64_t nr_periods = 0, nr_throttled = 0, throttled_ns = 0;
};

struct ProcessIdentity {
  int32_t pid = 0;  // host pid
  // Innermost pid namespace (inode of /proc/PID/ns/pid) and the process's
  // pid in each namespace from the host's (nspid[0] == pid) inwards.
  uint64_t pid_ns = 0;
  std::vector<int32_t> nspid;
  ContainerIdentity container;
  JobIdentity job;
  // The v2 cgroup path and the v1 hierarchies' ("cpu,cpuacct:/kubepods/...").
  std::vector<std::string> cgroups;
  // Throttling of the process's own cgroup: as a scan read it (cumulative),
  // and over the recording (what the trace keeps, end less start).
  CgroupThrottling cpu_stat;
  CgroupThrottling cpu_stat_delta;
  // The scan could not open PID/environ: `job` is unknown, not empty (the
  // end scan runs after the capability drop and cannot read other users'
  // environments; record keeps what the start scan read then).
  bool environ_unreadable = false;
  // Something worth writing: a namespace, a container/pod/job or a rank.
  bool worth_recording() const { return nspid.size() > 1 || !container.empty() || !job.empty(); }
};

inline const char* ContainerRuntimeName(ContainerRuntime r) {
  switch (r) {
    case ContainerRuntime::kNone: return "";
    case ContainerRuntime::kContainerd: return "containerd";
    case ContainerRuntime::kCrio: return "cri-o";
    case ContainerRuntime::kDocker: return "docker";
    case ContainerRuntime::kPodman: return "podman";
    case ContainerRuntime::kUnknown: return "unknown";
  }
  return "";
}

inline const char* PodQosName(PodQos q) {
  switch (q) {
    case PodQos::kNone: return "";
    case PodQos::kGuaranteed: return "Guaranteed";
    case PodQos::kBurstable: return "Burstable";
    case PodQos::kBestEffort: return "BestEffort";
  }
  return "";
}

}  // namespace gpunoise::model
