// Follows every NIC's counters and link state from one periodic reading to
// the next: per-counter steps (never negative: a reset is counted from zero
// and reported as a kCounterReset event), link events derived from carrier
// and carrier_changes (so a flap shorter than the sampling interval still
// shows), devices that appear or disappear, and totals since the first
// reading. Netlink notifications, when the caller has them, give the exact
// time of a carrier change; the tracker then adds only the changes the
// notifications missed. Pure logic over readings: tests feed it synthetic
// series.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/nic_health.h"

namespace gpunoise::model {

struct NicReading {
  int32_t ifindex = 0;
  std::string device;  // kernel interface name
  std::string driver;  // "" when the device has no ethtool driver info
  bool carrier = false;
  std::string operstate;
  uint32_t carrier_changes = 0;
  uint32_t speed_mbps = 0;
  std::string duplex, autoneg;  // "full"/"half", "on"/"off"; empty: unknown (no link, no ethtool settings)
  std::vector<NicCounterValue> counters;
};

struct NicCounterStepOut {
  std::string device;
  std::string name;
  uint64_t delta = 0;
};

struct NicTrackerUpdate {
  uint64_t from = 0, to = 0;  // the interval the steps cover
  std::vector<NicCounterStepOut> steps;  // only counters that rose
  std::vector<LinkEvent> events;
};

class NicCounterTracker {
 public:
  // A carrier change the kernel announced (RTM_NEWLINK), at its time.
  // Returns false when a periodic reading already reported it: the kernel
  // counts the change (carrier_changes) at once but may announce it later
  // (linkwatch), so a reading can see it first. Each change is reported
  // once, by whichever source saw it first.
  bool Notice(const LinkEvent& e);
  // One reading of every device at `ts`. The first reading of a device is
  // its baseline.
  NicTrackerUpdate Observe(uint64_t ts, const std::vector<NicReading>& readings);
  // Rise of each counter since its device's baseline (counters that never
  // rose are left out), with kind and queue from the counter map.
  std::vector<NicCounterTotal> Totals() const;
  // Per device: the driver, resets seen, carrier changes since the baseline.
  struct DeviceSummary {
    std::string device, driver;
    uint64_t resets = 0;
    uint32_t carrier_changes = 0;
    uint32_t link_down_events = 0;
    bool present = true;
  };
  std::vector<DeviceSummary> Devices() const;

 private:
  struct Device {
    std::string driver;
    bool carrier = false;
    uint32_t carrier_changes = 0, carrier_changes_base = 0;
    uint32_t speed_mbps = 0;
    std::string duplex, autoneg;
    uint32_t accounted = 0;  // the kernel's carrier_changes up to which events were reported
    uint32_t downs = 0;
    uint64_t resets = 0;
    bool present = true;
    std::map<std::string, uint64_t> last, total;
  };
  std::map<std::string, Device> devices_;  // by interface name
  uint64_t last_ts_ = 0;
};

}  // namespace gpunoise::model
