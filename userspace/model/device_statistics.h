// The kernel's device statistics count from each device's creation and
// vanish with it; a recording's network snapshots count from the recording's
// start and never go down (model::Delta counts an entry missing from the
// earlier snapshot from zero). DeviceStatisticsSeries turns the one into the
// other: a device counts from the first reading that saw it, keeps its last
// count after it went away (or a read failed or was cut short), and a device
// whose counters went down (deleted and made again under its ifindex)
// carries on from what it had counted.
#pragma once

#include <map>
#include <span>
#include <tuple>

#include "model/net_counters.h"

namespace gpunoise::model {

class DeviceStatisticsSeries {
 public:
  // One reading: the device-wide counts (kDeviceWideCpu) of the devices read.
  void Observe(std::span<const DeviceQueueCount> reading);
  // Every device seen so far, counted since the first reading that saw it.
  void AppendTo(NetSnapshot* out) const;

 private:
  struct Series {
    DeviceQueueCount first;    // the reading it counts from
    DeviceQueueCount last;     // the latest reading
    DeviceQueueCount carried;  // what earlier lives of the device counted
  };
  std::map<std::tuple<NetDeviceKey, NetDirection>, Series> series_;
};

}  // namespace gpunoise::model
