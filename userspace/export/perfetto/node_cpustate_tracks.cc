// NodeTrackWriter's cpustate records: idle periods and frequency changes as
// per-CPU counter tracks under "Node", NUMA balancing events and what could
// be measured as instants on the node metadata track
// (export/perfetto/node_tracks.h).
#include <fmt/format.h>

#include "export/perfetto/node_tracks.h"
#include "export/perfetto/sequence_ids.h"
#include "export/perfetto/track_event_writer.h"
#include "export/perfetto/track_identity_packets.h"

namespace gpunoise::perfetto {

namespace node_metric {
std::string CpuIdleState(uint32_t cpu) { return fmt::format("cpu{} idle state", cpu); }
std::string CpuFrequency(uint32_t cpu) { return fmt::format("cpu{} frequency", cpu); }
std::string CpuNetRxUntimed(uint32_t cpu) { return fmt::format("cpu{} NET_RX softirqs untimed", cpu); }
}  // namespace node_metric

Result<uint64_t> NodeTrackWriter::CpuStateTrack(uint64_t ts, const std::string& name, std::string_view unit,
                                                const model::TrackIdentity& id) {
  auto it = cpustate_tracks_.find(name);
  if (it != cpustate_tracks_.end()) return it->second;
  TracePacketBuilder packet;
  if (!root_track_) {
    root_track_ = writer_.TrackUuid("gpunoise node root");
    writer_.FillTrackDescriptor(&packet, root_track_, kNodeRootTrackName, 0,
                                "steal time and CPU-quota throttling (gpunoise record)");
    GN_RETURN_IF_ERROR(out_(packet));
  }
  uint64_t uuid = writer_.TrackUuid("gpunoise node counter " + name);
  writer_.FillCounterTrackDescriptor(&packet, uuid, name, TrackEventWriter::CounterUnit::kNone, unit, root_track_);
  GN_RETURN_IF_ERROR(out_(packet));
  FillTrackIdentity(writer_, &packet, ts, MetadataTrack(ts), uuid, id);
  GN_RETURN_IF_ERROR(out_(packet));
  cpustate_tracks_.emplace(name, uuid);
  return uuid;
}

Status NodeTrackWriter::CpuStateCounter(uint64_t ts, const std::string& name, double value, std::string_view unit,
                                        const model::TrackIdentity& id) {
  GN_ASSIGN_OR_RETURN(uint64_t track, CpuStateTrack(ts, name, unit, id));
  TracePacketBuilder packet;
  writer_.FillCounter(&packet, ts, track, value);
  return out_(packet);
}

namespace {

model::TrackIdentity CpuCounterId(model::NodeMetric metric, uint32_t cpu) {
  model::TrackIdentity id;
  id.kind = model::TrackKind::kNodeCounter;
  id.node_metric = metric;
  id.cpu = static_cast<int32_t>(cpu);
  return id;
}

}  // namespace

Status NodeTrackWriter::WriteIdle(const model::CpuStateEvent& idle) {
  if (idle.cpu >= idle_writers_.size()) idle_writers_.resize(idle.cpu + 1);
  std::unique_ptr<TrackEventWriter>& writer = idle_writers_[idle.cpu];
  if (!writer) {
    GN_ASSIGN_OR_RETURN(uint64_t track,
                        CpuStateTrack(idle.begin, node_metric::CpuIdleState(idle.cpu), "state",
                                      CpuCounterId(model::NodeMetric::kCpuIdleState, idle.cpu)));
    writer = std::make_unique<TrackEventWriter>(CpuIdleSequenceId(idle.cpu), writer_.salt(), track);
  }
  const uint64_t track = writer->default_track();
  writer->FillCounter(&idle_packet_, idle.begin, track, static_cast<double>(idle.value));
  GN_RETURN_IF_ERROR(out_(idle_packet_));
  writer->FillCounter(&idle_packet_, std::max(idle.end, idle.begin), track, -1);
  return out_(idle_packet_);
}

Status NodeTrackWriter::WriteFrequency(uint64_t ts, uint32_t cpu, uint32_t khz) {
  return CpuStateCounter(ts, node_metric::CpuFrequency(cpu), static_cast<double>(khz), "kHz",
                         CpuCounterId(model::NodeMetric::kCpuFrequency, cpu));
}

Status NodeTrackWriter::WriteNetRxUntimed(uint64_t ts, uint32_t cpu, uint64_t total) {
  return CpuStateCounter(ts, node_metric::CpuNetRxUntimed(cpu), static_cast<double>(total), "softirqs",
                         CpuCounterId(model::NodeMetric::kNetRxUntimed, cpu));
}

Status NodeTrackWriter::WriteNuma(const model::NumaEvent& n) {
  TracePacketBuilder packet;
  EventRef e = writer_.FillInstant(&packet, n.ts, MetadataTrack(n.ts), model::NumaEventName(n.kind), "gpunoise");
  AddArg(e, "tid", n.tid);
  AddArg(e, "cpu", n.cpu);
  if (n.kind == model::NumaEventKind::kMigrate) {
    AddArg(e, "succeeded", n.succeeded);
    AddArg(e, "failed", n.failed);
    AddArg(e, "reason", n.reason);
  } else {
    if (n.kind == model::NumaEventKind::kSwap) AddArg(e, "other_tid", n.other_tid);
    AddArg(e, "src_cpu", n.src_cpu);
    AddArg(e, "dst_cpu", n.dst_cpu);
    AddArg(e, "src_nid", n.src_nid);
    AddArg(e, "dst_nid", n.dst_nid);
  }
  return out_(packet);
}

Status NodeTrackWriter::WriteNodeInstant(uint64_t ts, std::string_view name, std::initializer_list<MetaArg> args) {
  TracePacketBuilder packet;
  EventRef e = writer_.FillInstant(&packet, ts, MetadataTrack(ts), name, "gpunoise");
  for (const MetaArg& a : args) {
    if (!a.text.empty()) AddArg(e, a.name, a.text);
    else AddArg(e, a.name, a.number);
  }
  return out_(packet);
}

}  // namespace gpunoise::perfetto
