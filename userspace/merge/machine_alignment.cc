#include "merge/machine_alignment.h"

#include <functional>
#include <map>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "common/proto_wire.h"
#include "compression/inflate.h"
#include "export/perfetto/protos/perfetto_fields.h"
#include "merge/trace_merger.h"
#include "export/perfetto/wire_fields.h"

namespace gpunoise::perfetto {
namespace {

using wire::ForEachField;
using wire::WireField;

// Calls `visit(id, timestamp, has_timestamp, clock_field)` with each clock
// of a ClockSnapshot message.
template <typename Visit>
Status ForEachClock(std::string_view snapshot, Visit visit) {
  return ForEachField(snapshot, [&](const WireField& clock) {
    if (clock.number != pf::ClockSnapshot::kClocks || clock.wire_type != 2) return;
    uint64_t id = 0, ts = 0;
    bool has_ts = false;
    (void)ForEachField(clock.bytes, [&](const WireField& f) {
      if (f.number == pf::ClockSnapshot::Clock::kClockId && f.wire_type == 0) id = f.varint;
      if (f.number == pf::ClockSnapshot::Clock::kTimestamp && f.wire_type == 0) ts = f.varint, has_ts = true;
    });
    visit(id, ts, has_ts, clock);
  });
}

void ReadClockSnapshot(std::string_view snapshot, InputMachine* m) {
  std::optional<int64_t> boottime, realtime;
  (void)ForEachClock(snapshot, [&](uint64_t id, uint64_t ts, bool has_ts, const WireField&) {
    if (!has_ts) return;
    if (id == pf::BUILTIN_CLOCK_BOOTTIME) boottime = static_cast<int64_t>(ts);
    if (id == pf::BUILTIN_CLOCK_REALTIME) realtime = static_cast<int64_t>(ts);
  });
  if (boottime && realtime) m->clocks = ClockPair{*boottime, *realtime};
}

void ReadTrackEvent(std::string_view event, InputMachine* m) {
  (void)ForEachField(event, [&](const WireField& a) {
    if (a.number != pf::TrackEvent::kDebugAnnotations || a.wire_type != 2) return;
    std::string_view name, value;
    std::optional<int64_t> number;
    (void)ForEachField(a.bytes, [&](const WireField& f) {
      if (f.wire_type == 0 && (f.number == pf::DebugAnnotation::kBoolValue || f.number == pf::DebugAnnotation::kUintValue ||
                               f.number == pf::DebugAnnotation::kIntValue))
        number = static_cast<int64_t>(f.varint);
      if (f.wire_type != 2) return;
      if (f.number == pf::DebugAnnotation::kName) name = f.bytes;
      if (f.number == pf::DebugAnnotation::kStringValue) value = f.bytes;
    });
    if (name == "boot_id" && m->boot_id.empty()) m->boot_id = value;
    if (name == "machine_name" && m->machine_name.empty()) m->machine_name = value;
    if (name == "clock.start.synced" && number && !m->clock_synced) m->clock_synced = *number != 0;
    if (name == "clock.start.maxerror_us" && number) m->maxerror_us = *number;
  });
}

// Only what identifies the machine is read; a packet this cannot parse is
// left to the merge itself, which names the byte.
void ReadPacket(std::string_view packet, InputMachine* m) {
  (void)ForEachField(packet, [&](const WireField& f) {
    if (f.wire_type != 2) return;
    if (f.number == pf::TracePacket::kClockSnapshot && !m->clocks) ReadClockSnapshot(f.bytes, m);
    // In a merged trace another machine's snapshots are written as the
    // client clocks of RemoteClockSync packets (AsRemoteClockSync).
    if (f.number == pf::TracePacket::kRemoteClockSync && !m->clocks)
      (void)ForEachField(f.bytes, [&](const WireField& round) {
        if (round.number != pf::RemoteClockSync::kSyncedClocks || round.wire_type != 2 || m->clocks) return;
        (void)ForEachField(round.bytes, [&](const WireField& c) {
          if (c.number == pf::RemoteClockSync::SyncedClocks::kClientClocks && c.wire_type == 2)
            ReadClockSnapshot(c.bytes, m);
        });
      });
    if (f.number == pf::TracePacket::kTrackEvent) ReadTrackEvent(f.bytes, m);
    if (f.number == pf::TracePacket::kSystemInfo)
      (void)ForEachField(f.bytes, [&](const WireField& s) {
        if (s.number == pf::SystemInfo::kMachineName && s.wire_type == 2) m->machine_name = s.bytes;
      });
  });
}

void AppendField(uint32_t number, std::string_view bytes, std::string* out) { ProtoWriter(out).Bytes(number, bytes); }

void AppendVarintField(uint32_t number, uint64_t v, std::string* out) { ProtoWriter(out).Varint(number, v); }

std::string BoottimeSnapshot(int64_t ts) {
  std::string clock, snapshot;
  AppendVarintField(pf::ClockSnapshot::Clock::kClockId, pf::BUILTIN_CLOCK_BOOTTIME, &clock);
  AppendVarintField(pf::ClockSnapshot::Clock::kTimestamp, static_cast<uint64_t>(ts), &clock);
  AppendField(pf::ClockSnapshot::kClocks, clock, &snapshot);
  return snapshot;
}

}  // namespace

namespace {

// Calls `visit` with every packet of `path`, compressed blocks opened.
Status ForEachTracePacket(const std::string& path, const std::function<void(std::string_view)>& visit) {
  GN_ASSIGN_OR_RETURN(TracePacketReader reader, TracePacketReader::Open(path));
  std::string packet;
  uint64_t offset = 0;
  std::vector<uint8_t> inflated;
  while (true) {
    GN_ASSIGN_OR_RETURN(bool more, reader.Next(&packet, &offset));
    if (!more) break;
    auto compressed = FindCompressedPackets(packet);
    if (!compressed.ok() || !*compressed) {
      visit(packet);
      continue;
    }
    std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>((*compressed)->bytes.data()),
                                   (*compressed)->bytes.size());
    Status ok = (*compressed)->codec == CompressedPackets::Codec::kZlib
                    ? compression::InflateZlib(bytes, &inflated)
                    : compression::InflateZstd(bytes, &inflated);
    if (!ok.ok()) continue;  // the merge reports the damage with its offset
    std::string_view trace(reinterpret_cast<const char*>(inflated.data()), inflated.size());
    (void)ForEachPacket(trace, [&](std::string_view inner, uint64_t) {
      visit(inner);
      return OkStatus();
    });
  }
  return OkStatus();
}

}  // namespace

Result<InputMachine> ScanInputMachine(const std::string& path) {
  InputMachine m;
  m.path = path;
  GN_RETURN_IF_ERROR(ForEachTracePacket(path, [&](std::string_view packet) { ReadPacket(packet, &m); }));
  return m;
}

Result<std::map<uint32_t, InputMachine>> ScanTraceMachines(const std::string& path) {
  std::map<uint32_t, InputMachine> machines;
  GN_RETURN_IF_ERROR(ForEachTracePacket(path, [&](std::string_view packet) {
    uint32_t id = 0;
    (void)ForEachField(packet, [&](const WireField& f) {
      if (f.number == pf::TracePacket::kMachineId && f.wire_type == 0) id = static_cast<uint32_t>(f.varint);
    });
    InputMachine& m = machines[id];
    m.path = path;
    ReadPacket(packet, &m);
  }));
  return machines;
}

std::string UnsyncedClockWarning(const InputMachine& m) {
  if (!m.clock_synced || *m.clock_synced) return {};
  std::string bound = m.maxerror_us > 0 ? fmt::format("up to {:.3f} s (the kernel's maxerror)",
                                                      static_cast<double>(m.maxerror_us) / 1e6)
                                        : std::string("an unknown amount");
  return fmt::format("{}: the clock of {} was not synchronised when it was recorded (adjtimex: STA_UNSYNC), so its "
                     "REALTIME alignment may be off by {}",
                     m.path, m.machine_name.empty() ? std::string("its machine") : m.machine_name, bound);
}

std::vector<uint32_t> AssignMachines(const std::vector<InputMachine>& inputs) {
  std::map<std::string, uint32_t> by_key;
  std::vector<uint32_t> machine(inputs.size(), 0);
  uint32_t next = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = inputs[i];
    std::string key = !in.boot_id.empty()        ? "boot:" + in.boot_id
                      : !in.machine_name.empty() ? "name:" + in.machine_name
                                                 : "";
    if (key.empty()) {
      machine[i] = i == 0 ? next++ : machine[i - 1];
      continue;
    }
    auto [it, inserted] = by_key.try_emplace(key, next);
    if (inserted) ++next;
    machine[i] = it->second;
  }
  return machine;
}

std::vector<std::string> MachineLabels(const std::vector<MachineIdentity>& machines) {
  std::vector<std::string> labels(machines.size());
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < machines.size(); ++i) {
    labels[i] = machines[i].name;
    if (!machines[i].name.empty() && !machines[i].boot_id.empty()) by_name[machines[i].name].push_back(i);
  }
  for (auto& [name, idx] : by_name) {
    // Distinct boots of this name, earliest first.
    std::vector<size_t> boots;
    for (size_t i : idx) {
      bool seen = false;
      for (size_t b : boots) seen |= machines[b].boot_id == machines[i].boot_id;
      if (!seen) boots.push_back(i);
    }
    if (boots.size() < 2) continue;
    std::stable_sort(boots.begin(), boots.end(), [&](size_t a, size_t b) {
      const auto& x = machines[a].booted_at;
      const auto& y = machines[b].booted_at;
      return x && y ? *x < *y : false;
    });
    for (size_t i : idx)
      for (size_t n = 0; n < boots.size(); ++n)
        if (machines[boots[n]].boot_id == machines[i].boot_id) labels[i] = fmt::format("{} (boot {})", name, n + 1);
  }
  return labels;
}

MachineClockSync AlignByRealtime(uint32_t machine_id, const ClockPair& machine,
                                 const ClockPair& host) {
  // The host BOOTTIME at the instant the machine read `machine.realtime`,
  // if both REALTIME clocks agree.
  return {machine_id, machine.boottime, host.boottime + (machine.realtime - host.realtime)};
}

std::string RemoteClockSyncPacket(const MachineClockSync& sync) {
  // The trace processor averages (t1c + t2c)/2 - t1h and t2c - (t1h + t2h)/2
  // over consecutive rounds (less than 30 s apart by the client BOOTTIME);
  // with both rounds stamped alike each is client - host.
  std::string round;
  AppendField(pf::RemoteClockSync::SyncedClocks::kClientClocks, BoottimeSnapshot(sync.client_boottime), &round);
  AppendField(pf::RemoteClockSync::SyncedClocks::kHostClocks, BoottimeSnapshot(sync.host_boottime), &round);
  std::string body;
  AppendField(pf::RemoteClockSync::kSyncedClocks, round, &body);
  AppendField(pf::RemoteClockSync::kSyncedClocks, round, &body);
  std::string packet;
  AppendField(pf::TracePacket::kRemoteClockSync, body, &packet);
  AppendVarintField(pf::TracePacket::kMachineId, sync.machine_id, &packet);
  return packet;
}

Result<std::optional<RemoteClockSnapshot>> AsRemoteClockSync(std::string_view packet, uint32_t machine_id,
                                                              int64_t host_minus_client_ns) {
  std::optional<std::string_view> snapshot;
  RemoteClockSnapshot out;
  bool rest_has_payload = false;
  size_t copied = 0;
  GN_RETURN_IF_ERROR(ForEachField(packet, [&](const WireField& f) {
    if (f.number == pf::TracePacket::kClockSnapshot && f.wire_type == 2 && !snapshot) {
      snapshot = f.bytes;
      out.rest.append(packet.data() + copied, f.start - copied);
      copied = f.end;
      return;
    }
    // What every packet may carry; anything else is a payload to keep.
    if (f.number != pf::TracePacket::kTimestamp && f.number != pf::TracePacket::kTimestampClockId &&
        f.number != pf::TracePacket::kTrustedPacketSequenceId && f.number != pf::TracePacket::kTrustedPid &&
        f.number != pf::TracePacket::kMachineId)
      rest_has_payload = true;
  }));
  if (!snapshot) return std::optional<RemoteClockSnapshot>();
  out.rest.append(packet.data() + copied, packet.size() - copied);
  if (!rest_has_payload) out.rest.clear();

  std::string clocks;  // the snapshot's clocks, without its primary_trace_clock
  std::optional<int64_t> boottime;
  bool sequence_scoped = false;
  Status parsed = ForEachClock(*snapshot, [&](uint64_t id, uint64_t ts, bool has_ts, const WireField& c) {
    // Upstream's first sequence-scoped clock id.
    if (id >= 64) sequence_scoped = true;
    if (id == pf::BUILTIN_CLOCK_BOOTTIME && has_ts) boottime = static_cast<int64_t>(ts);
    clocks.append(snapshot->data() + c.start, c.end - c.start);
  });
  // A snapshot this cannot read is copied as it is, for the trace processor
  // to judge.
  if (!parsed.ok() || sequence_scoped) return std::optional<RemoteClockSnapshot>();

  std::string round;
  AppendField(pf::RemoteClockSync::SyncedClocks::kClientClocks, clocks, &round);
  // The host's BOOTTIME of that instant; none before the host booted (the
  // machine then keeps its own axis, and only its clocks join the graph).
  if (boottime && *boottime + host_minus_client_ns > 0)
    AppendField(pf::RemoteClockSync::SyncedClocks::kHostClocks, BoottimeSnapshot(*boottime + host_minus_client_ns),
                &round);
  std::string body;
  // Two rounds alike, as in RemoteClockSyncPacket: the offset is exact.
  AppendField(pf::RemoteClockSync::kSyncedClocks, round, &body);
  AppendField(pf::RemoteClockSync::kSyncedClocks, round, &body);
  AppendField(pf::TracePacket::kRemoteClockSync, body, &out.sync_packet);
  AppendVarintField(pf::TracePacket::kMachineId, machine_id, &out.sync_packet);
  return std::optional<RemoteClockSnapshot>(std::move(out));
}

}  // namespace gpunoise::perfetto
