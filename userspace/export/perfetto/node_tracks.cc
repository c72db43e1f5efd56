#include "export/perfetto/node_tracks.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/cpu_list.h"
#include "export/perfetto/track_event_writer.h"
#include "export/perfetto/track_identity_packets.h"

namespace gpunoise::perfetto {

namespace node_metric {
std::string CpuSteal(uint32_t cpu) { return fmt::format("cpu{} steal", cpu); }
}  // namespace node_metric

namespace {

model::TrackIdentity NodeCounterId(model::NodeMetric metric, int32_t cpu, std::string cgroup = {}) {
  model::TrackIdentity id;
  id.kind = model::TrackKind::kNodeCounter;
  id.node_metric = metric;
  id.cpu = cpu;
  id.detail = std::move(cgroup);
  return id;
}

}  // namespace

NodeTrackWriter::NodeTrackWriter(TrackEventWriter& writer, PacketOut out)
    : writer_(writer), out_(std::move(out)) {}

uint64_t NodeTrackWriter::MetadataTrack(uint64_t ts) {
  if (metadata_track_) return metadata_track_;
  metadata_track_ = writer_.TrackUuid(kNodeMetadataTrackName);
  TracePacketBuilder packet;
  writer_.FillTrackDescriptor(&packet, metadata_track_, kNodeMetadataTrackName, 0,
                              "CPU quotas and the processes they apply to (docs/report.md)");
  (void)out_(packet);  // a failure shows again on the next write
  // The report finds this track by its identity, not by its name.
  model::TrackIdentity id;
  id.kind = model::TrackKind::kNodeMetadata;
  FillTrackIdentity(writer_, &packet, ts, metadata_track_, metadata_track_, id);
  (void)out_(packet);
  return metadata_track_;
}

Status NodeTrackWriter::Counter(uint64_t ts, const std::string& name, double value, std::string_view unit,
                                const model::TrackIdentity& id) {
  TracePacketBuilder packet;
  auto it = counter_tracks_.find(name);
  if (it == counter_tracks_.end()) {
    if (!root_track_) {
      root_track_ = writer_.TrackUuid("gpunoise node root");
      writer_.FillTrackDescriptor(&packet, root_track_, kNodeRootTrackName, 0,
                                  "steal time and CPU-quota throttling (gpunoise record)");
      GN_RETURN_IF_ERROR(out_(packet));
    }
    uint64_t uuid = writer_.TrackUuid("gpunoise node counter " + name);
    writer_.FillCounterTrackDescriptor(&packet, uuid, name, TrackEventWriter::CounterUnit::kNone, unit,
                                       root_track_);
    GN_RETURN_IF_ERROR(out_(packet));
    FillTrackIdentity(writer_, &packet, ts, MetadataTrack(ts), uuid, id);
    GN_RETURN_IF_ERROR(out_(packet));
    it = counter_tracks_.emplace(name, uuid).first;
  }
  writer_.FillCounter(&packet, ts, it->second, value);
  return out_(packet);
}

Status NodeTrackWriter::WriteQuota(uint64_t ts, const QuotaInfo& q) {
  if (!quotas_.insert(q.path).second) return OkStatus();
  TracePacketBuilder packet;
  EventRef e = writer_.FillInstant(&packet, ts, MetadataTrack(ts), kCpuQuotaEventName, "gpunoise");
  AddArg(e, "path", q.path);
  AddArg(e, "version", static_cast<int64_t>(q.version));
  AddArg(e, "quota_us", q.quota_us);
  AddArg(e, "period_us", q.period_us);
  return out_(packet);
}

Status NodeTrackWriter::WriteQuotaProcess(uint64_t ts, const std::string& cgroup, int32_t pid) {
  if (!processes_.insert({cgroup, pid}).second) return OkStatus();
  TracePacketBuilder packet;
  EventRef e = writer_.FillInstant(&packet, ts, MetadataTrack(ts), kQuotaProcessEventName, "gpunoise");
  AddArg(e, "cgroup", cgroup);
  AddArg(e, "pid", pid);
  return out_(packet);
}

Status NodeTrackWriter::WriteAffinity(uint64_t ts, int32_t tid, const std::vector<int>& cpus) {
  auto it = affinity_.find(tid);
  if (it != affinity_.end() && it->second == cpus) return OkStatus();
  affinity_[tid] = cpus;
  TracePacketBuilder packet;
  EventRef e = writer_.FillInstant(&packet, ts, MetadataTrack(ts), kAffinityEventName, "gpunoise");
  AddArg(e, "tid", tid);
  AddArg(e, "cpus", FormatCpuList(cpus));
  return out_(packet);
}

Status NodeTrackWriter::WriteStall(const model::MemStall& stall, int32_t pid, std::string_view thread_name) {
  TracePacketBuilder packet;
  // One track per thread and kind: a throttle inside a reclaim need not
  // nest exactly (its begin is its end minus the delay it reports), and
  // slices on one track must.
  auto key = std::make_pair(stall.tid, static_cast<int>(stall.kind));
  auto it = stall_tracks_.find(key);
  if (it == stall_tracks_.end()) {
    uint64_t uuid = writer_.TrackUuid(fmt::format("gpunoise memstall {} {}", stall.tid, static_cast<int>(stall.kind)));
    writer_.FillThreadTrackDescriptor(&packet, uuid, pid ? pid : stall.tid, stall.tid, thread_name);
    GN_RETURN_IF_ERROR(out_(packet));
    it = stall_tracks_.emplace(key, uuid).first;
  }
  EventRef e = writer_.FillSliceBegin(&packet, stall.begin, it->second, model::MemStallName(stall.kind),
                                         kMemStallCategory);
  AddArg(e, "cpu", stall.cpu);
  AddArg(e, stall.kind == model::MemStallKind::kCompaction ? "status"
            : stall.kind == model::MemStallKind::kThrottled ? "reason"
            : stall.kind == model::MemStallKind::kDirtyThrottle ? "dirtied" : "nr_reclaimed",
         stall.value);
  GN_RETURN_IF_ERROR(out_(packet));
  writer_.FillSliceEnd(&packet, std::max(stall.end, stall.begin), it->second);
  return out_(packet);
}

Status NodeTrackWriter::WriteSample(const model::NodeSnapshot& baseline, const model::NodeSnapshot& earlier,
                                    const model::NodeSnapshot& later) {
  namespace m = node_metric;
  // Steal between the two readings of /proc/stat, which a sample may not
  // have made (record/node_recording.h NextProcStatGapNs).
  const uint64_t steal_from = earlier.steal_ts ? earlier.steal_ts : earlier.ts;
  const uint64_t steal_to = later.steal_ts ? later.steal_ts : later.ts;
  if (steal_to > steal_from) {
    const double span = static_cast<double>(steal_to - steal_from);
    for (const auto& [cpu, steal] : later.steal_ns) {
      auto before = earlier.steal_ns.find(cpu);
      if (before == earlier.steal_ns.end()) continue;
      double share = steal > before->second ? static_cast<double>(steal - before->second) / span : 0;
      // A track appears with its first stolen tick (most nodes have none).
      if (share == 0 && !counter_tracks_.count(m::CpuSteal(cpu))) continue;
      GN_RETURN_IF_ERROR(Counter(steal_from, m::CpuSteal(cpu), std::min(share, 1.0), "share",
                                 NodeCounterId(model::NodeMetric::kCpuSteal, static_cast<int32_t>(cpu))));
    }
  }
  for (const auto& [path, now] : later.cgroups) {
    auto base = baseline.cgroups.find(path);
    model::CgroupCpuStat zero;
    const model::CgroupCpuStat& b = base == baseline.cgroups.end() ? zero : base->second;
    // A cgroup that appeared during the recording counts from zero.
    auto inc = [](uint64_t a, uint64_t z) { return static_cast<double>(a > z ? a - z : 0); };
    std::string prefix = std::string(m::kCgroupPrefix) + path;
    using N = model::NodeMetric;
    GN_RETURN_IF_ERROR(Counter(later.ts, prefix + std::string(m::kNrThrottled), inc(now.nr_throttled, b.nr_throttled),
                               "periods", NodeCounterId(N::kCgroupNrThrottled, -1, path)));
    GN_RETURN_IF_ERROR(Counter(later.ts, prefix + std::string(m::kThrottledNs), inc(now.throttled_ns, b.throttled_ns),
                               "ns", NodeCounterId(N::kCgroupThrottledNs, -1, path)));
    GN_RETURN_IF_ERROR(Counter(later.ts, prefix + std::string(m::kNrPeriods), inc(now.nr_periods, b.nr_periods),
                               "periods", NodeCounterId(N::kCgroupNrPeriods, -1, path)));
  }
  for (const auto& [file, value] : later.kernel_health) {
    model::TrackIdentity id;
    id.kind = model::TrackKind::kKernelHealthCounter;
    id.detail = file;
    const std::string name = std::string(m::kKernelHealthPrefix) + file;
    auto it = kernel_health_.find(file);
    if (it == kernel_health_.end()) {
      auto b = baseline.kernel_health.find(file);
      const bool in_baseline = b != baseline.kernel_health.end();
      const uint64_t first = in_baseline ? b->second : value;
      GN_RETURN_IF_ERROR(Counter(in_baseline ? baseline.ts : later.ts, name, static_cast<double>(first), "events", id));
      it = kernel_health_.emplace(file, first).first;
    }
    if (it->second == value) continue;
    it->second = value;
    GN_RETURN_IF_ERROR(Counter(later.ts, name, static_cast<double>(value), "events", id));
  }
  return OkStatus();
}

Status NodeTrackWriter::Close(uint64_t ts) {
  for (const auto& [name, uuid] : counter_tracks_) {
    // Cumulative counters keep their last value.
    if (name.rfind(node_metric::kCgroupPrefix, 0) == 0 || name.rfind(node_metric::kKernelHealthPrefix, 0) == 0)
      continue;
    TracePacketBuilder packet;
    writer_.FillCounter(&packet, ts, uuid, 0);
    GN_RETURN_IF_ERROR(out_(packet));
  }
  return OkStatus();
}

}  // namespace gpunoise::perfetto
