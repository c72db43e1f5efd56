#include "import/identity_reader.h"

#include <string_view>

#include "common/strings.h"

namespace gpunoise::import {
namespace {

std::optional<int32_t> Int32(const model::TrackArg& a) {
  int64_t v = 0;
  if (!a.AsInt64(&v) || v < INT32_MIN || v > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(v);
}

model::ContainerRuntime RuntimeNamed(std::string_view s) {
  for (auto r : {model::ContainerRuntime::kContainerd, model::ContainerRuntime::kCrio,
                 model::ContainerRuntime::kDocker, model::ContainerRuntime::kPodman,
                 model::ContainerRuntime::kUnknown})
    if (s == model::ContainerRuntimeName(r)) return r;
  return model::ContainerRuntime::kUnknown;
}

model::PodQos QosNamed(std::string_view s) {
  for (auto q : {model::PodQos::kGuaranteed, model::PodQos::kBurstable, model::PodQos::kBestEffort})
    if (s == model::PodQosName(q)) return q;
  return model::PodQos::kNone;
}

}  // namespace

bool IsProcessIdentity(const model::TrackEventRecord& event) {
  return event.type == model::TrackEventType::kInstant && event.name == model::kIdentityEventName;
}

model::ProcessIdentity ParseProcessIdentity(const model::TrackEventRecord& event) {
  model::ProcessIdentity id;
  for (const model::TrackArg& a : event.args) {
    std::string_view n = a.name;
    if (n == "pid") id.pid = Int32(a).value_or(0);
    else if (n == "pid_ns") {
      int64_t v = 0;
      if (a.AsInt64(&v)) id.pid_ns = static_cast<uint64_t>(v);
    } else if (n == "nspid") {
      for (std::string_view p : Split(a.ToString(), '/'))
        if (auto v = ParseInt64(p)) id.nspid.push_back(static_cast<int32_t>(*v));
    } else if (n == "container.runtime") id.container.runtime = RuntimeNamed(a.ToString());
    else if (n == "container.id") id.container.container_id = a.ToString();
    else if (n == "container.name") id.container.container_name = a.ToString();
    else if (n == "container.cgroup") id.container.cgroup = a.ToString();
    else if (n == "pod.uid") id.container.pod_uid = a.ToString();
    else if (n == "pod.qos") id.container.qos = QosNamed(a.ToString());
    else if (n == "pod.name") id.container.pod_name = a.ToString();
    else if (n == "pod.namespace") id.container.pod_namespace = a.ToString();
    else if (n == "slurm.job_id") id.container.slurm_job_id = a.ToString();
    else if (n == "rank") id.job.rank = Int32(a);
    else if (n == "local_rank") id.job.local_rank = Int32(a);
    else if (n == "world_size") id.job.world_size = Int32(a);
    else if (n == "job.id") id.job.job_id = a.ToString();
    else if (StartsWith(n, "cgroup.")) id.cgroups.push_back(a.ToString());
    else if (StartsWith(n, "cpu.")) {
      model::CgroupThrottling& d = id.cpu_stat_delta;
      int64_t v = 0;
      bool number = a.AsInt64(&v) && v >= 0;
      if (n == "cpu.stat") d.file = a.ToString(), d.valid = true;
      else if (n == "cpu.periods" && number) d.nr_periods = static_cast<uint64_t>(v);
      else if (n == "cpu.throttled_periods" && number) d.nr_throttled = static_cast<uint64_t>(v);
      else if (n == "cpu.throttled_ns" && number) d.throttled_ns = static_cast<uint64_t>(v);
    }
  }
  return id;
}

}  // namespace gpunoise::import
