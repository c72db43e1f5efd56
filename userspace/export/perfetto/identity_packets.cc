#include "export/perfetto/identity_packets.h"

#include <fmt/format.h>

#include "export/perfetto/protos/perfetto_fields.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"

namespace gpunoise::perfetto {

std::vector<std::string> IdentityLabels(const model::ProcessIdentity& id) {
  std::vector<std::string> out;
  const model::ContainerIdentity& c = id.container;
  if (!c.pod_name.empty())
    out.push_back(c.pod_namespace.empty() ? "pod " + c.pod_name : fmt::format("pod {}/{}", c.pod_namespace, c.pod_name));
  if (!c.pod_uid.empty()) out.push_back("pod-uid " + c.pod_uid);
  if (c.qos != model::PodQos::kNone) out.push_back(std::string("qos ") + model::PodQosName(c.qos));
  if (!c.container_id.empty())
    out.push_back(fmt::format("container {}{} ({})", c.container_name.empty() ? "" : c.container_name + " ",
                              c.container_id.substr(0, 12), model::ContainerRuntimeName(c.runtime)));
  if (id.job.rank) out.push_back(fmt::format("rank {}", *id.job.rank));
  if (id.job.local_rank) out.push_back(fmt::format("local rank {}", *id.job.local_rank));
  if (!id.job.job_id.empty()) out.push_back("job " + id.job.job_id);
  if (id.nspid.size() > 1) out.push_back(fmt::format("pid {} in pid namespace {}", id.nspid.back(), id.pid_ns));
  return out;
}

Status WriteProcessIdentities(uint64_t ts, const std::vector<model::ProcessIdentity>& identities,
                              TrackEventWriter& writer, TraceFileWriter& out) {
  if (identities.empty()) return OkStatus();
  TracePacketBuilder packet;
  uint64_t track = writer.TrackUuid(model::kIdentityTrackName);
  writer.FillTrackDescriptor(&packet, track, model::kIdentityTrackName, 0,
                             "each process's pid namespace, container, pod, rank and job");
  GN_RETURN_IF_ERROR(out.WritePacket(packet));
  for (const model::ProcessIdentity& id : identities) {
    // The UI's view: labels on the process itself.
    writer.FillProcessTrackDescriptor(&packet, writer.TrackUuid(fmt::format("identity {}", id.pid)), id.pid, {});
    for (const std::string& label : IdentityLabels(id))
      packet.In(pf::TrackDescriptor::kProcess).Bytes(pf::ProcessDescriptor::kProcessLabels, label);
    GN_RETURN_IF_ERROR(out.WritePacket(packet));

    EventRef e = writer.FillInstant(&packet, ts, track, model::kIdentityEventName, "gpunoise");
    AddArg(e, "pid", id.pid);
    if (id.pid_ns) AddArg(e, "pid_ns", id.pid_ns);
    if (id.nspid.size() > 1) {
      std::string ids;
      for (int32_t n : id.nspid) ids += (ids.empty() ? "" : "/") + std::to_string(n);
      AddArg(e, "nspid", ids);
    }
    const model::ContainerIdentity& c = id.container;
    if (c.runtime != model::ContainerRuntime::kNone)
      AddArg(e, "container.runtime", model::ContainerRuntimeName(c.runtime));
    if (!c.container_id.empty()) AddArg(e, "container.id", c.container_id);
    if (!c.container_name.empty()) AddArg(e, "container.name", c.container_name);
    if (!c.pod_uid.empty()) AddArg(e, "pod.uid", c.pod_uid);
    if (c.qos != model::PodQos::kNone) AddArg(e, "pod.qos", model::PodQosName(c.qos));
    if (!c.pod_name.empty()) AddArg(e, "pod.name", c.pod_name);
    if (!c.pod_namespace.empty()) AddArg(e, "pod.namespace", c.pod_namespace);
    if (!c.slurm_job_id.empty()) AddArg(e, "slurm.job_id", c.slurm_job_id);
    if (!c.cgroup.empty()) AddArg(e, "container.cgroup", c.cgroup);
    if (id.job.rank) AddArg(e, "rank", *id.job.rank);
    if (id.job.local_rank) AddArg(e, "local_rank", *id.job.local_rank);
    if (id.job.world_size) AddArg(e, "world_size", *id.job.world_size);
    if (!id.job.job_id.empty()) AddArg(e, "job.id", id.job.job_id);
    // Throttling of its cgroup over the recording (both scans saw it).
    if (id.cpu_stat_delta.valid) {
      AddArg(e, "cpu.stat", id.cpu_stat_delta.file);
      AddArg(e, "cpu.periods", id.cpu_stat_delta.nr_periods);
      AddArg(e, "cpu.throttled_periods", id.cpu_stat_delta.nr_throttled);
      AddArg(e, "cpu.throttled_ns", id.cpu_stat_delta.throttled_ns);
    }
    for (size_t i = 0; i < id.cgroups.size(); ++i) AddArg(e, fmt::format("cgroup.{}", i), id.cgroups[i]);
    GN_RETURN_IF_ERROR(out.WritePacket(packet));
  }
  return OkStatus();
}

}  // namespace gpunoise::perfetto
