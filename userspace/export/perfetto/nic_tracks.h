// The NIC's own counters, link events and PCIe health as TrackEvent
// packets, beside the network collectors' tracks (net_tracks.h):
//  - counter tracks "<device> nic <counter>/s" under "Network / <device>",
//    one per `ethtool -S` or standard-group counter that rose (rates per
//    sampling interval, like the other network rates);
//  - link events as instants on the device's track, category
//    kLinkEventCategory, named by model::LinkEventKindName ("carrier_down",
//    "carrier_up", "speed_change", "appeared", "removed", "counter_reset");
//  - PCIe link width/speed and AER totals as counter tracks under "PCIe"
//    ("<address> link width", "<address> link GT/s", "<address> aer
//    errors"), written when they change, and a "pcie retrain" instant when
//    the width or speed changed during the recording;
//  - end-of-recording totals on the "gpunoise network" track: "nic
//    counters" per device, "pcie link" per PCI function.
// docs/network.md ("NIC counters, link events, PCIe") lists every name and
// arg; `gpunoise report` reads them back (analyze/nic_metadata.h).
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
#include "model/kernel_log.h"
#include "model/nic_counter_tracker.h"
#include "model/nic_health.h"
#include "model/track_identity.h"

namespace gpunoise::perfetto {

class TrackEventWriter;
class NetTrackWriter;

inline constexpr std::string_view kLinkEventCategory = "gpunoise.link";
inline constexpr std::string_view kNicCountersEventName = "nic counters";
inline constexpr std::string_view kLinkKernelLogEventName = "kernel log";
inline constexpr std::string_view kPcieLinkEventName = "pcie link";
inline constexpr std::string_view kPcieRetrainEventName = "pcie retrain";
inline constexpr std::string_view kPcieRootTrackName = "PCIe";
// "<device> nic <counter>/s"
inline constexpr std::string_view kNicCounterMetricPrefix = "nic ";

class NicTrackWriter {
 public:
  using PacketOut = std::function<Status(const TracePacketBuilder&)>;
  NicTrackWriter(TrackEventWriter& writer, NetTrackWriter& net, PacketOut out);

  // Rates of the counters that rose in (update.from, update.to], written at
  // update.from; tracks that exist and did not rise get a 0. Link events of
  // the update are written too.
  Status WriteUpdate(const model::NicTrackerUpdate& update);
  Status WriteLinkEvent(const model::LinkEvent& e);
  // A kernel log line that belongs to link event `e` (model/link_kernel_log.h):
  // an instant kLinkKernelLogEventName at the line's own time on the
  // device's track, args "device", "text", "seq", "level", "kernel_device"
  // (DEVICE=), "link_event" (the event's kind) and "link_event_ts".
  Status WriteLinkKernelLog(const model::LinkEvent& e, const model::KernelLogEntry& line);
  // Ends every NIC counter track at `ts`.
  Status CloseRates(uint64_t ts);

  // PCIe state at `ts`: counter samples where a value changed (all at the
  // first call), and a "pcie retrain" instant where width or speed changed.
  Status WritePcie(uint64_t ts, const std::vector<model::PcieLinkState>& states);

  struct DeviceInfo {
    std::string driver, bus_info;
    uint64_t resets = 0;
    uint32_t carrier_changes = 0, link_down_events = 0;
  };
  // Totals at `ts`: one "nic counters" instant per device (args "device",
  // "driver", "bus_info", "resets", "carrier_changes", "link_down_events",
  // and "c.<counter>" = its rise), one "pcie link" per PCI function.
  Status WriteTotals(uint64_t ts, const std::vector<model::NicCounterTotal>& totals,
                     const std::map<std::string, DeviceInfo>& devices,
                     const std::vector<model::PcieLinkState>& first,
                     const std::vector<model::PcieLinkState>& last);

 private:
  Status Counter(uint64_t ts, uint64_t parent, const std::string& name, double value, std::string_view unit,
                 const model::TrackIdentity* id = nullptr);
  uint64_t PcieRoot();

  TrackEventWriter& writer_;
  NetTrackWriter& net_;
  PacketOut out_;
  std::map<std::string, uint64_t> tracks_;  // full name -> uuid
  std::set<std::string> rate_tracks_;
  std::map<std::string, std::string> rate_track_device_;
  uint64_t pcie_root_ = 0;
  std::map<std::string, model::PcieLinkState> pcie_last_;
};

}  // namespace gpunoise::perfetto
