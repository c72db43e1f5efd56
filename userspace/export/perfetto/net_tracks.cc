#include "export/perfetto/net_tracks.h"

#include <fmt/format.h>

#include <tuple>

#include "common/cpu_list.h"
#include "export/perfetto/track_event_writer.h"
#include "export/perfetto/track_identity_packets.h"

namespace gpunoise::perfetto {

namespace net_metric {
std::string CpuNapiPackets(uint32_t cpu) { return fmt::format("cpu{} napi packets/s", cpu); }
std::string CpuRxPackets(uint32_t cpu) { return fmt::format("cpu{} rx packets/s", cpu); }
}  // namespace net_metric

namespace {

using M = model::NetMetric;

// What a counter counts, as typed data (Sample adds kind and device).
model::TrackIdentity Id(M metric, int32_t cpu = -1, std::string detail = {}) {
  model::TrackIdentity id;
  id.metric = metric;
  id.cpu = cpu;
  id.detail = std::move(detail);
  return id;
}

}  // namespace

NetTrackWriter::NetTrackWriter(TrackEventWriter& writer, PacketOut out)
    : writer_(writer), out_(std::move(out)) {}

uint64_t NetTrackWriter::MetadataTrack(uint64_t ts) {
  if (metadata_identity_written_) return metadata_track_;
  TracePacketBuilder packet;
  if (!metadata_track_) {
    metadata_track_ = writer_.TrackUuid(kNetMetadataTrackName);
    writer_.FillTrackDescriptor(&packet, metadata_track_, kNetMetadataTrackName, 0,
                                "network devices, NIC IRQs and per-queue totals (docs/network.md)");
    if (Status st = out_(packet); !st.ok() && first_error_.ok()) first_error_ = st;
  }
  // The report finds this track by its identity, not by its name.
  model::TrackIdentity id;
  id.kind = model::TrackKind::kNetMetadata;
  FillTrackIdentity(writer_, &packet, ts, metadata_track_, metadata_track_, id);
  if (Status st = out_(packet); !st.ok() && first_error_.ok()) first_error_ = st;
  metadata_identity_written_ = true;
  return metadata_track_;
}

uint64_t NetTrackWriter::DeviceTrack(const std::string& label) {
  if (auto it = device_tracks_.find(label); it != device_tracks_.end()) return it->second;
  TracePacketBuilder packet;
  if (!root_track_) {
    root_track_ = writer_.TrackUuid("gpunoise net root");
    writer_.FillTrackDescriptor(&packet, root_track_, kNetRootTrackName, 0,
                                "per-device counters from the network collectors");
    if (Status st = out_(packet); !st.ok() && first_error_.ok()) first_error_ = st;
  }
  uint64_t uuid = writer_.TrackUuid("gpunoise net device " + label);
  writer_.FillTrackDescriptor(&packet, uuid, label, root_track_);
  if (Status st = out_(packet); !st.ok() && first_error_.ok()) first_error_ = st;
  device_tracks_.emplace(label, uuid);
  return uuid;
}

Status NetTrackWriter::Sample(uint64_t ts, const std::string& label, std::string_view metric,
                              double value, std::string_view unit, model::TrackIdentity id) {
  std::string name = label + " " + std::string(metric);
  auto it = counter_tracks_.find(name);
  TracePacketBuilder packet;
  if (it == counter_tracks_.end()) {
    if (value == 0) return OkStatus();  // no track until there is something to show
    uint64_t parent = DeviceTrack(label);
    uint64_t uuid = writer_.TrackUuid("gpunoise net counter " + name);
    writer_.FillCounterTrackDescriptor(&packet, uuid, name, TrackEventWriter::CounterUnit::kNone,
                                       unit, parent);
    GN_RETURN_IF_ERROR(out_(packet));
    id.kind = model::TrackKind::kNetCounter;
    id.device = label;
    FillTrackIdentity(writer_, &packet, ts, MetadataTrack(ts), uuid, id);
    GN_RETURN_IF_ERROR(out_(packet));
    it = counter_tracks_.emplace(name, uuid).first;
  }
  writer_.FillCounter(&packet, ts, it->second, value);
  return out_(packet);
}

Status NetTrackWriter::WriteRates(const model::NetSnapshot& earlier, const model::NetSnapshot& later,
                                  const model::NetNames& names) {
  namespace m = net_metric;
  const uint64_t ts = earlier.ts;
  for (const auto& [dev, r] : model::RatesByDevice(earlier, later)) {
    const std::string label = model::DeviceLabel(dev, names);
    GN_RETURN_IF_ERROR(Sample(ts, label, m::kRxPackets, r.rx_packets_per_s, "packets/s", Id(M::kRxPackets)));
    GN_RETURN_IF_ERROR(Sample(ts, label, m::kRxGbit, r.rx_gbit_per_s, "Gbit/s", Id(M::kRxGbit)));
    GN_RETURN_IF_ERROR(Sample(ts, label, m::kTxPackets, r.tx_packets_per_s, "packets/s", Id(M::kTxPackets)));
    GN_RETURN_IF_ERROR(Sample(ts, label, m::kTxGbit, r.tx_gbit_per_s, "Gbit/s", Id(M::kTxGbit)));
    GN_RETURN_IF_ERROR(Sample(ts, label, m::kTxErrors, r.tx_errors_per_s, "packets/s", Id(M::kTxErrors)));
    GN_RETURN_IF_ERROR(Sample(ts, label, m::kQueuedPackets, r.queued_packets_per_s, "packets/s",
                              Id(M::kQueuedPackets)));
    GN_RETURN_IF_ERROR(Sample(ts, label, m::kNapiPolls, r.napi_polls_per_s, "polls/s", Id(M::kNapiPolls)));
    GN_RETURN_IF_ERROR(Sample(ts, label, m::kNapiFullBudget, r.napi_full_budget_per_s, "polls/s",
                              Id(M::kNapiFullBudget)));
    GN_RETURN_IF_ERROR(Sample(ts, label, m::kNapiPackets, r.napi_packets_per_s, "packets/s", Id(M::kNapiPackets)));
    uint64_t& timeouts = tx_timeout_totals_[label];
    timeouts += r.tx_timeouts;
    GN_RETURN_IF_ERROR(Sample(ts, label, m::kTxTimeouts, static_cast<double>(timeouts), "timeouts",
                              Id(M::kTxTimeouts)));
    for (const auto& [reason, rate] : r.drops_per_s)
      GN_RETURN_IF_ERROR(Sample(ts, label,
                                std::string(m::kDropsPrefix) + model::DropReasonLabel(reason, names),
                                rate, "packets/s", Id(M::kDrops, -1, model::DropReasonLabel(reason, names))));
    for (const auto& [cpu, rate] : r.napi_packets_per_s_by_cpu)
      GN_RETURN_IF_ERROR(Sample(ts, label, m::CpuNapiPackets(cpu), rate, "packets/s",
                                Id(M::kCpuNapiPackets, static_cast<int32_t>(cpu))));
    for (const auto& [cpu, rate] : r.rx_packets_per_s_by_cpu)
      GN_RETURN_IF_ERROR(Sample(ts, label, m::CpuRxPackets(cpu), rate, "packets/s",
                                Id(M::kCpuRxPackets, static_cast<int32_t>(cpu))));
  }
  // NIC-driver events per device as the tracepoint names it.
  if (!later.nic.empty() && later.ts > earlier.ts) {
    const double seconds = static_cast<double>(later.ts - earlier.ts) / 1e9;
    std::map<std::pair<std::string, uint32_t>, uint64_t> hits;
    for (const auto& n : model::Delta(earlier, later).nic) hits[{n.device, n.event}] += n.count;
    for (const auto& [key, count] : hits) {
      const auto& [device, event] = key;
      std::string event_name = event < names.nic_events.size() ? names.nic_events[event]
                                                               : fmt::format("#{}", event);
      GN_RETURN_IF_ERROR(Sample(ts, device.empty() ? "(nic)" : device,
                                std::string(m::kNicEventsPrefix) + event_name + "/s",
                                static_cast<double>(count) / seconds, "events/s",
                                Id(M::kNicEvents, -1, event_name)));
    }
  }
  return first_error_;
}

Status NetTrackWriter::CloseRates(uint64_t ts) {
  TracePacketBuilder packet;
  for (const auto& [name, uuid] : counter_tracks_) {
    if (name.size() >= net_metric::kTxTimeouts.size() &&
        name.compare(name.size() - net_metric::kTxTimeouts.size(), std::string::npos,
                     net_metric::kTxTimeouts) == 0)
      continue;  // a cumulative count keeps its last value
    writer_.FillCounter(&packet, ts, uuid, 0);
    GN_RETURN_IF_ERROR(out_(packet));
  }
  return OkStatus();
}

Status NetTrackWriter::WriteIrqMap(uint64_t ts, const model::IrqTable& irqs) {
  TracePacketBuilder packet;
  for (const auto& [irq, info] : irqs) {
    if (info.device.empty()) continue;
    uint64_t track = MetadataTrack(ts);
    EventRef e = writer_.FillInstant(&packet, ts, track, kNetIrqEventName, "gpunoise");
    AddArg(e, "irq", info.irq);
    AddArg(e, "name", info.name);
    AddArg(e, "device", info.device);
    AddArg(e, "queue", info.queue);
    AddArg(e, "queue_kind", info.queue_kind);
    AddArg(e, "affinity", FormatCpuList(info.affinity));
    AddArg(e, "effective_affinity", FormatCpuList(info.effective_affinity));
    AddArg(e, "description", model::DescribeNicIrq(info));
    GN_RETURN_IF_ERROR(out_(packet));
  }
  return first_error_;
}

Status NetTrackWriter::WriteNicStatus(uint64_t ts, const model::CollectorReport& nic) {
  TracePacketBuilder packet;
  EventRef e = writer_.FillInstant(&packet, ts, MetadataTrack(ts), kNicStatusEventName, "gpunoise");
  AddArg(e, "state", model::CollectorStateName(nic.state));
  if (!nic.reason.empty()) AddArg(e, "reason", nic.reason);
  std::string attached;
  for (const auto& a : nic.attached_events) attached += (attached.empty() ? "" : ",") + a;
  AddArg(e, "attached_events", attached);
  AddArg(e, "attached_count", static_cast<uint64_t>(nic.attached_events.size()));
  GN_RETURN_IF_ERROR(out_(packet));
  return first_error_;
}

Status NetTrackWriter::WriteRdmaPorts(uint64_t ts, const std::vector<model::RdmaPort>& deltas) {
  for (const model::RdmaPort& port : deltas) {
    TracePacketBuilder packet;
    EventRef e = writer_.FillInstant(&packet, ts, MetadataTrack(ts), model::kRdmaPortEventName, "gpunoise");
    AddArg(e, "device", port.device);
    AddArg(e, "port", port.port);
    for (const auto& [name, v] : port.counters) AddArg(e, name, v);
    GN_RETURN_IF_ERROR(out_(packet));
  }
  return OkStatus();
}

Status NetTrackWriter::WriteTotals(const model::NetSnapshot& baseline,
                                   const model::NetSnapshot& final, const model::NetNames& names) {
  const model::NetSnapshot delta = model::Delta(baseline, final);
  const uint64_t ts = final.ts;
  TracePacketBuilder packet;
  auto instant = [&](std::string_view name) {
    return writer_.FillInstant(&packet, ts, MetadataTrack(ts), name, "gpunoise");
  };

  for (const auto& [dev, t] : model::TotalsByDevice(delta)) {
    // Device statistics name every device of the namespace; one that did
    // nothing in the recording says nothing (as no counting program saw it).
    if (model::IsIdle(t)) continue;
    EventRef e = instant(kNetDeviceEventName);
    auto it = names.devices.find(dev);
    AddArg(e, "device", model::DeviceLabel(dev, names));
    AddArg(e, "name", it == names.devices.end() ? std::string() : it->second);
    AddArg(e, "netns", dev.netns);
    AddArg(e, "ifindex", dev.ifindex);
    AddArg(e, "own_netns", dev.netns == names.own_netns);
    AddArg(e, "rx_packets", t.rx_packets);
    AddArg(e, "rx_bytes", t.rx_bytes);
    AddArg(e, "tx_packets", t.tx_packets);
    AddArg(e, "tx_bytes", t.tx_bytes);
    AddArg(e, "tx_errors", t.tx_errors);
    AddArg(e, "queued_packets", t.queued_packets);
    AddArg(e, "queued_bytes", t.queued_bytes);
    AddArg(e, "tx_timeouts", t.tx_timeouts);
    AddArg(e, "napi_polls", t.napi_polls);
    AddArg(e, "napi_full_budget_polls", t.napi_full_budget);
    AddArg(e, "napi_packets", t.napi_work);
    AddArg(e, "device_statistics", t.from_device_statistics);
    // False for a device in another namespace than the recorder's when its
    // packets came from device statistics: rx and tx are unknown, not zero.
    // (ifindex 0, no device, has no statistics and no packets to count.)
    AddArg(e, "packets_counted",
           t.from_device_statistics || names.packets_counted_everywhere || dev.ifindex == 0);
    uint64_t drops = 0;
    for (const auto& [reason, n] : t.drops_by_reason) {
      drops += n;
      AddArg(e, "drops." + model::DropReasonLabel(reason, names), n);
    }
    AddArg(e, "drops", drops);
    GN_RETURN_IF_ERROR(out_(packet));
  }

  for (const auto& q : delta.devices) {
    // The device's own statistics have no queue or CPU: its totals say all.
    if (q.cpu == model::kDeviceWideCpu) continue;
    if (!q.packets && !q.bytes && !q.errors) continue;
    EventRef e = instant(kNetQueueEventName);
    AddArg(e, "device", model::DeviceLabel(q.dev, names));
    AddArg(e, "direction", model::NetDirectionName(q.dir));
    AddArg(e, "queue", q.queue);
    AddArg(e, "cpu", q.cpu);
    AddArg(e, "packets", q.packets);
    AddArg(e, "bytes", q.bytes);
    AddArg(e, "errors", q.errors);
    GN_RETURN_IF_ERROR(out_(packet));
  }

  for (const auto& n : delta.napi) {
    if (!n.polls) continue;
    EventRef e = instant(kNapiEventName);
    AddArg(e, "device", model::DeviceLabel(n.dev, names));
    AddArg(e, "napi_id", n.napi_id);
    AddArg(e, "queue", n.queue);
    AddArg(e, "irq", n.irq);
    AddArg(e, "cpu", n.cpu);
    AddArg(e, "polls", n.polls);
    AddArg(e, "full_budget_polls", n.full_budget);
    AddArg(e, "packets", n.work);
    GN_RETURN_IF_ERROR(out_(packet));
  }

  // Drops summed over CPUs: a reason and a code location say what happened.
  std::map<std::tuple<model::NetDeviceKey, uint32_t, uint64_t>, std::pair<uint64_t, uint64_t>> drops;
  for (const auto& d : delta.drops) {
    auto& [packets, bytes] = drops[{d.dev, d.reason, d.location}];
    packets += d.packets;
    bytes += d.bytes;
  }
  for (const auto& [key, counts] : drops) {
    if (!counts.first) continue;
    const auto& [dev, reason, location] = key;
    EventRef e = instant(kNetDropEventName);
    AddArg(e, "device", model::DeviceLabel(dev, names));
    AddArg(e, "reason", reason);
    AddArg(e, "reason_name", model::DropReasonLabel(reason, names));
    AddArg(e, "location", fmt::format("{:#x}", location));
    auto sym = names.drop_locations.find(location);
    AddArg(e, "location_symbol", sym == names.drop_locations.end() ? std::string() : sym->second);
    AddArg(e, "packets", counts.first);
    AddArg(e, "bytes", counts.second);
    GN_RETURN_IF_ERROR(out_(packet));
  }

  for (const auto& n : delta.nic) {
    if (!n.count) continue;
    EventRef e = instant(kNicEventEventName);
    AddArg(e, "event", n.event < names.nic_events.size() ? names.nic_events[n.event]
                                                         : fmt::format("#{}", n.event));
    AddArg(e, "device", n.device);
    AddArg(e, "cpu", n.cpu);
    AddArg(e, "count", n.count);
    GN_RETURN_IF_ERROR(out_(packet));
  }
  return first_error_;
}

}  // namespace gpunoise::perfetto
