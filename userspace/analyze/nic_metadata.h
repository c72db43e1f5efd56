// What the NIC recording leaves in a trace (export/perfetto/nic_tracks.h),
// read back as typed data: per-device counter totals ("nic counters"),
// link events (instants of category "gpunoise.link" on the device tracks),
// PCIe link state at the end and retrains during the recording, and the
// per-counter rate tracks "<device> nic <counter>/s" with each counter's
// kind and queue from the counter map.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/net_metadata.h"
#include "analyze/timeline.h"
#include "model/nic_health.h"

namespace gpunoise::analyze {

struct NicDevice {
  std::string device, driver, bus_info;
  uint64_t resets = 0;
  uint32_t carrier_changes = 0, link_down_events = 0;
  std::vector<model::NicCounterTotal> counters;
  std::map<model::NicCounterKind, uint64_t> by_kind;  // model::SumByKind
  uint64_t drops() const;        // every drop kind
  uint64_t pause_frames() const;  // pause and PFC, both directions
};

struct PcieLink {
  model::PcieLinkState state;  // at the end
  uint32_t start_width = 0;
  double start_speed_gts = 0;
  uint64_t aer_correctable_rise = 0, aer_nonfatal_rise = 0, aer_fatal_rise = 0;
};

struct PcieRetrain {
  uint64_t ts = 0;
  std::string address, role, device;
  uint32_t previous_width = 0, width = 0;
  double previous_speed_gts = 0, speed_gts = 0;
};

struct NicRateTrack {
  std::string device, counter;
  model::NicCounterKind kind = model::NicCounterKind::kOther;
  int32_t queue = -1;
  const std::vector<CounterSample>* samples = nullptr;
};

struct NicMetadata {
  std::vector<NicDevice> devices;
  std::vector<model::LinkEvent> link_events;  // by time
  std::vector<PcieLink> pcie;
  std::vector<PcieRetrain> retrains;
  std::vector<NicRateTrack> rates;
  const NicDevice* Device(std::string_view name) const;
};

NicMetadata ReadNicMetadata(const Timeline& t, const NetMetadata& net);

}  // namespace gpunoise::analyze
