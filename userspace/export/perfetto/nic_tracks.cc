#include "export/perfetto/nic_tracks.h"

#include <fmt/format.h>

#include "export/perfetto/net_tracks.h"
#include "export/perfetto/track_event_writer.h"
#include "export/perfetto/track_identity_packets.h"

namespace gpunoise::perfetto {

NicTrackWriter::NicTrackWriter(TrackEventWriter& writer, NetTrackWriter& net, PacketOut out)
    : writer_(writer), net_(net), out_(std::move(out)) {}

Status NicTrackWriter::Counter(uint64_t ts, uint64_t parent, const std::string& name, double value,
                               std::string_view unit, const model::TrackIdentity* id) {
  TracePacketBuilder packet;
  auto it = tracks_.find(name);
  if (it == tracks_.end()) {
    uint64_t uuid = writer_.TrackUuid("gpunoise nic counter " + name);
    writer_.FillCounterTrackDescriptor(&packet, uuid, name, TrackEventWriter::CounterUnit::kNone, unit, parent);
    GN_RETURN_IF_ERROR(out_(packet));
    if (id) {
      FillTrackIdentity(writer_, &packet, ts, net_.MetadataTrackUuid(ts), uuid, *id);
      GN_RETURN_IF_ERROR(out_(packet));
    }
    it = tracks_.emplace(name, uuid).first;
  }
  writer_.FillCounter(&packet, ts, it->second, value);
  return out_(packet);
}

Status NicTrackWriter::WriteUpdate(const model::NicTrackerUpdate& u) {
  if (u.to > u.from) {
    const double seconds = static_cast<double>(u.to - u.from) / 1e9;
    std::set<std::string> written;
    for (const auto& s : u.steps) {
      std::string name = s.device + " " + std::string(kNicCounterMetricPrefix) + s.name + "/s";
      model::TrackIdentity id;
      id.kind = model::TrackKind::kNetCounter;
      id.device = s.device;
      id.metric = model::NetMetric::kNicCounter;
      id.detail = s.name;
      GN_RETURN_IF_ERROR(Counter(u.from, net_.DeviceTrackUuid(s.device), name,
                                 static_cast<double>(s.delta) / seconds, "events/s", &id));
      rate_tracks_.insert(name);
      written.insert(name);
    }
    for (const std::string& name : rate_tracks_)
      if (!written.count(name)) GN_RETURN_IF_ERROR(Counter(u.from, 0, name, 0, "events/s"));
  }
  for (const auto& e : u.events) GN_RETURN_IF_ERROR(WriteLinkEvent(e));
  return OkStatus();
}

Status NicTrackWriter::WriteLinkEvent(const model::LinkEvent& e) {
  TracePacketBuilder packet;
  uint64_t track = net_.DeviceTrackUuid(e.device.empty() ? std::string("(nic)") : e.device);
  EventRef ev = writer_.FillInstant(&packet, e.ts, track, model::LinkEventKindName(e.kind), kLinkEventCategory);
  AddArg(ev, "device", e.device);
  AddArg(ev, "ifindex", e.ifindex);
  AddArg(ev, "kind", model::LinkEventKindName(e.kind));
  AddArg(ev, "carrier", e.carrier);
  if (!e.operstate.empty()) AddArg(ev, "operstate", e.operstate);
  AddArg(ev, "carrier_changes", e.carrier_changes);
  if (e.speed_mbps) AddArg(ev, "speed_mbps", e.speed_mbps);
  if (!e.duplex.empty()) AddArg(ev, "duplex", e.duplex);
  if (!e.autoneg.empty()) AddArg(ev, "autoneg", e.autoneg);
  if (!e.previous_duplex.empty()) AddArg(ev, "previous_duplex", e.previous_duplex);
  if (!e.previous_autoneg.empty()) AddArg(ev, "previous_autoneg", e.previous_autoneg);
  if (!e.counter.empty()) AddArg(ev, "counter", e.counter);
  if (e.kind == model::LinkEventKind::kCounterReset || e.kind == model::LinkEventKind::kSpeedChange) {
    AddArg(ev, "previous", e.previous);
    AddArg(ev, "current", e.current);
  }
  AddArg(ev, "source", e.source);
  return out_(packet);
}

Status NicTrackWriter::WriteLinkKernelLog(const model::LinkEvent& e, const model::KernelLogEntry& line) {
  TracePacketBuilder packet;
  uint64_t track = net_.DeviceTrackUuid(e.device.empty() ? std::string("(nic)") : e.device);
  EventRef ev = writer_.FillInstant(&packet, line.ts, track, kLinkKernelLogEventName, kLinkEventCategory);
  AddArg(ev, "device", e.device);
  AddArg(ev, "text", line.text);
  AddArg(ev, "seq", line.seq);
  AddArg(ev, "level", static_cast<uint32_t>(line.level));
  if (!line.device.empty()) AddArg(ev, "kernel_device", line.device);
  AddArg(ev, "link_event", model::LinkEventKindName(e.kind));
  AddArg(ev, "link_event_ts", e.ts);
  return out_(packet);
}

Status NicTrackWriter::CloseRates(uint64_t ts) {
  for (const std::string& name : rate_tracks_) GN_RETURN_IF_ERROR(Counter(ts, 0, name, 0, "events/s"));
  return OkStatus();
}

uint64_t NicTrackWriter::PcieRoot() {
  if (pcie_root_) return pcie_root_;
  pcie_root_ = writer_.TrackUuid("gpunoise pcie root");
  TracePacketBuilder packet;
  writer_.FillTrackDescriptor(&packet, pcie_root_, kPcieRootTrackName, 0,
                              "PCIe link width, speed and AER errors of NICs and GPUs (docs/network.md)");
  (void)out_(packet);
  return pcie_root_;
}

Status NicTrackWriter::WritePcie(uint64_t ts, const std::vector<model::PcieLinkState>& states) {
  for (const auto& s : states) {
    auto prev = pcie_last_.find(s.address);
    const bool first = prev == pcie_last_.end();
    uint64_t aer = s.aer_correctable.value_or(0) + s.aer_nonfatal.value_or(0) + s.aer_fatal.value_or(0);
    uint64_t prev_aer = first ? 0
                              : prev->second.aer_correctable.value_or(0) + prev->second.aer_nonfatal.value_or(0) +
                                    prev->second.aer_fatal.value_or(0);
    if (first || prev->second.width != s.width)
      GN_RETURN_IF_ERROR(Counter(ts, PcieRoot(), s.address + " link width", s.width, "lanes"));
    if (first || prev->second.speed_gts != s.speed_gts)
      GN_RETURN_IF_ERROR(Counter(ts, PcieRoot(), s.address + " link GT/s", s.speed_gts, "GT/s"));
    if (s.aer_correctable && (first || aer != prev_aer))
      GN_RETURN_IF_ERROR(Counter(ts, PcieRoot(), s.address + " aer errors", static_cast<double>(aer), "errors"));
    if (!first && (prev->second.width != s.width || prev->second.speed_gts != s.speed_gts)) {
      TracePacketBuilder packet;
      EventRef ev = writer_.FillInstant(&packet, ts, PcieRoot(), kPcieRetrainEventName, kLinkEventCategory);
      AddArg(ev, "address", s.address);
      AddArg(ev, "role", s.role);
      AddArg(ev, "device", s.device);
      AddArg(ev, "previous_width", prev->second.width);
      AddArg(ev, "width", s.width);
      AddArg(ev, "previous_speed_gts", prev->second.speed_gts);
      AddArg(ev, "speed_gts", s.speed_gts);
      GN_RETURN_IF_ERROR(out_(packet));
    }
    pcie_last_[s.address] = s;
  }
  return OkStatus();
}

Status NicTrackWriter::WriteTotals(uint64_t ts, const std::vector<model::NicCounterTotal>& totals,
                                   const std::map<std::string, DeviceInfo>& devices,
                                   const std::vector<model::PcieLinkState>& first,
                                   const std::vector<model::PcieLinkState>& last) {
  const uint64_t meta = net_.MetadataTrackUuid(ts);
  TracePacketBuilder packet;
  for (const auto& [device, info] : devices) {
    EventRef e = writer_.FillInstant(&packet, ts, meta, kNicCountersEventName, "gpunoise");
    AddArg(e, "device", device);
    AddArg(e, "driver", info.driver);
    AddArg(e, "bus_info", info.bus_info);
    AddArg(e, "resets", info.resets);
    AddArg(e, "carrier_changes", info.carrier_changes);
    AddArg(e, "link_down_events", info.link_down_events);
    for (const auto& t : totals)
      if (t.device == device) AddArg(e, "c." + t.name, t.delta);
    GN_RETURN_IF_ERROR(out_(packet));
  }
  std::map<std::string, const model::PcieLinkState*> at_start;
  for (const auto& s : first) at_start[s.address] = &s;
  for (const auto& s : last) {
    EventRef e = writer_.FillInstant(&packet, ts, meta, kPcieLinkEventName, "gpunoise");
    AddArg(e, "address", s.address);
    AddArg(e, "role", s.role);
    AddArg(e, "device", s.device);
    AddArg(e, "speed_gts", s.speed_gts);
    AddArg(e, "max_speed_gts", s.max_speed_gts);
    AddArg(e, "width", s.width);
    AddArg(e, "max_width", s.max_width);
    auto start = at_start.find(s.address);
    auto put_aer = [&](const char* name, const std::optional<uint64_t>& now,
                       const std::optional<uint64_t> model::PcieLinkState::*field) {
      if (!now) return;
      AddArg(e, std::string("aer_") + name, *now);
      uint64_t before = start == at_start.end() ? *now : (start->second->*field).value_or(*now);
      AddArg(e, std::string("aer_") + name + "_rise", *now >= before ? *now - before : *now);
    };
    put_aer("correctable", s.aer_correctable, &model::PcieLinkState::aer_correctable);
    put_aer("nonfatal", s.aer_nonfatal, &model::PcieLinkState::aer_nonfatal);
    put_aer("fatal", s.aer_fatal, &model::PcieLinkState::aer_fatal);
    if (start != at_start.end()) {
      AddArg(e, "start_width", start->second->width);
      AddArg(e, "start_speed_gts", start->second->speed_gts);
    }
    GN_RETURN_IF_ERROR(out_(packet));
  }
  return OkStatus();
}

}  // namespace gpunoise::perfetto
