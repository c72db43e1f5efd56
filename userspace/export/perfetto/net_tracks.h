// Network counters and metadata as TrackEvent packets: per-device counter
// tracks (packets/s, Gbit/s, drops/s by reason, NAPI polls/s, TX timeouts),
// the NIC IRQ map, and end-of-recording totals per device, queue and CPU.
// The names below are a contract with `gpunoise report` and are listed in
// docs/network.md ("Trace format").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "export/perfetto/trace_packet_builder.h"
#include "model/irq_info.h"
#include "model/net_counters.h"
#include "model/rdma_counters.h"
#include "model/session_info.h"
#include "model/track_identity.h"

namespace gpunoise::perfetto {

class TrackEventWriter;

// The track that carries network metadata instants.
inline constexpr std::string_view kNetMetadataTrackName = "gpunoise network";
// Parent of the per-device tracks in the UI.
inline constexpr std::string_view kNetRootTrackName = "Network";
// Instant event names on kNetMetadataTrackName.
inline constexpr std::string_view kNetIrqEventName = "irq";
inline constexpr std::string_view kNetDeviceEventName = "net device";
inline constexpr std::string_view kNetQueueEventName = "net queue";
inline constexpr std::string_view kNapiEventName = "napi";
inline constexpr std::string_view kNetDropEventName = "net drop";
inline constexpr std::string_view kNicEventEventName = "nic event";
inline constexpr std::string_view kNicStatusEventName = "nic status";

// Counter-track metric names: a track is named "<device label> <metric>".
namespace net_metric {
inline constexpr std::string_view kRxPackets = "rx packets/s";
inline constexpr std::string_view kRxGbit = "rx Gbit/s";
inline constexpr std::string_view kTxPackets = "tx packets/s";
inline constexpr std::string_view kTxGbit = "tx Gbit/s";
inline constexpr std::string_view kTxErrors = "tx errors/s";
inline constexpr std::string_view kQueuedPackets = "queued packets/s";
inline constexpr std::string_view kNapiPolls = "napi polls/s";
inline constexpr std::string_view kNapiFullBudget = "napi full-budget polls/s";
inline constexpr std::string_view kNapiPackets = "napi packets/s";
inline constexpr std::string_view kTxTimeouts = "tx timeouts";  // cumulative count
inline constexpr std::string_view kDropsPrefix = "drops/s ";  // + reason name
// "nic <category>/<event>/s" on the device the event names ("(nic)" if none)
inline constexpr std::string_view kNicEventsPrefix = "nic ";
// "cpu<N> napi packets/s", "cpu<N> rx packets/s"
std::string CpuNapiPackets(uint32_t cpu);
std::string CpuRxPackets(uint32_t cpu);
}  // namespace net_metric

class NetTrackWriter {
 public:
  using PacketOut = std::function<Status(const TracePacketBuilder&)>;

  NetTrackWriter(TrackEventWriter& writer, PacketOut out);

  // One "irq" instant per IRQ that serves a network device.
  Status WriteIrqMap(uint64_t ts, const model::IrqTable& irqs);

  // Rates over (earlier.ts, later.ts], each written at earlier.ts: a sample
  // holds the average rate from its timestamp to the next sample's. A track
  // appears with its first non-zero value and is written at every interval
  // after that.
  Status WriteRates(const model::NetSnapshot& earlier, const model::NetSnapshot& later,
                    const model::NetNames& names);
  // Ends every counter track at `ts` (a final zero), so the last interval's
  // rate does not extend past the recording.
  Status CloseRates(uint64_t ts);

  // What the nic collector did: attached events, or why it is off.
  Status WriteNicStatus(uint64_t ts, const model::CollectorReport& nic);

  // Totals from `baseline` to `final` (both cumulative), written at
  // final.ts: per device, per queue/direction/CPU, per NAPI instance/CPU,
  // per drop reason/location, per NIC event/device/CPU.
  Status WriteTotals(const model::NetSnapshot& baseline, const model::NetSnapshot& final,
                     const model::NetNames& names);
  // What each RDMA port's counters counted during the recording: one
  // "rdma port" instant per port (device, port, then every counter's delta).
  Status WriteRdmaPorts(uint64_t ts, const std::vector<model::RdmaPort>& deltas);

  // The track of a device under "Network" (created on first use), for
  // other writers that put a device's data beside these (nic_tracks.h).
  uint64_t DeviceTrackUuid(const std::string& label) { return DeviceTrack(label); }
  // The "gpunoise network" track (created on first use).
  // `ts`: when its identity instant (model/track_identity.h) is written, if
  // it is new.
  uint64_t MetadataTrackUuid(uint64_t ts) { return MetadataTrack(ts); }

 private:
  uint64_t MetadataTrack(uint64_t ts);
  uint64_t DeviceTrack(const std::string& label);
  // One sample of the counter "<label> <metric>"; `id` says what it counts
  // (kind, device and the metric's typed key), for the report.
  Status Sample(uint64_t ts, const std::string& label, std::string_view metric, double value,
                std::string_view unit, model::TrackIdentity id);

  TrackEventWriter& writer_;
  PacketOut out_;
  uint64_t metadata_track_ = 0;
  bool metadata_identity_written_ = false;
  uint64_t root_track_ = 0;
  std::map<std::string, uint64_t> device_tracks_;
  std::map<std::string, uint64_t> counter_tracks_;  // full name -> uuid
  std::map<std::string, uint64_t> tx_timeout_totals_;
  Status first_error_;
};

}  // namespace gpunoise::perfetto
