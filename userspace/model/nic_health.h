// The NIC's own view of itself, as typed records: counter readings of one
// device (ethtool -S and the kernel's standard statistics groups), link
// events (carrier, speed, appearance; on the device's track in the trace,
// with device and time so the kernel log lines of the same moment can be
// joined to them), and PCIe link health of NICs and GPUs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/nic_counter_map.h"

namespace gpunoise::model {

// One step of a cumulative counter. A counter that went down was reset (a
// device reset, a driver reload, a queue re-created): the step counts the new
// value from zero and says so, never a negative rate. A 32-bit counter that
// wrapped (previous value near 2^32, new value small) counts across the wrap.
struct CounterStep {
  uint64_t delta = 0;
  bool reset = false;
  bool wrapped = false;
};
CounterStep StepCounter(uint64_t previous, uint64_t current);

struct NicCounterValue {
  std::string name;  // as ethtool -S names it, or "eth-mac.FramesReceivedOK", "pause.rx_frames"
  uint64_t value = 0;
};

enum class LinkEventKind : uint8_t {
  kCarrierDown = 0,
  kCarrierUp,
  kSpeedChange,
  kAppeared,
  kRemoved,
  kCounterReset,
  kDuplexChange,   // "full" <-> "half" (ethtool link settings)
  kAutonegChange,  // autonegotiation turned "on" or "off"
};
std::string_view LinkEventKindName(LinkEventKind kind);  // "carrier_down", ...
std::optional<LinkEventKind> LinkEventKindFromName(std::string_view name);

// A link or device event. The black-box kernel log is matched to these by
// device (`device`, the kernel name) and time (`ts`, CLOCK_BOOTTIME).
struct LinkEvent {
  uint64_t ts = 0;
  std::string device;  // kernel interface name
  int32_t ifindex = 0;
  LinkEventKind kind = LinkEventKind::kCarrierDown;
  bool carrier = false;
  std::string operstate;      // "up", "down", "lowerlayerdown", ... (RFC 2863)
  uint32_t carrier_changes = 0;  // the kernel's count after the event
  uint32_t speed_mbps = 0;       // 0: unknown
  // Link settings after the event (ethtool: "full"/"half", "on"/"off";
  // empty: unknown), and before it for kDuplexChange/kAutonegChange.
  std::string duplex, autoneg;
  std::string previous_duplex, previous_autoneg;
  std::string counter;           // kCounterReset: which counter
  // kCounterReset: the counter's values around the reset; kSpeedChange:
  // the speeds (Mb/s) before and after.
  uint64_t previous = 0, current = 0;
  std::string source;  // "netlink" (an RTM_NEWLINK notification) or "sample" (seen in a periodic read)
};

// A NIC counter's rise over a recording, per device, read back from a trace.
struct NicCounterTotal {
  std::string device;  // device label as on the network tracks
  std::string name;
  NicCounterKind kind = NicCounterKind::kOther;
  int32_t queue = -1;
  uint64_t delta = 0;
};

// Per device and kind: the device-level counter where the driver has one,
// else the sum over its per-queue counters (so a driver that reports both
// is not counted twice).
std::map<NicCounterKind, uint64_t> SumByKind(const std::vector<NicCounterTotal>& totals);

// PCIe link and AER state of one PCI function.
struct PcieLinkState {
  std::string address;  // "0000:3b:00.0"
  std::string role;     // "nic" or "gpu"
  std::string device;   // the netdev ("eth0") or GPU it carries; may be empty
  double speed_gts = 0, max_speed_gts = 0;  // GT/s; 0 unknown
  uint32_t width = 0, max_width = 0;
  // Totals of the aer_dev_* files (TOTAL_ERR_COR, TOTAL_ERR_NONFATAL,
  // TOTAL_ERR_FATAL); absent without AER.
  std::optional<uint64_t> aer_correctable, aer_nonfatal, aer_fatal;
  bool degraded_width() const { return max_width && width && width < max_width; }
  bool degraded_speed() const { return max_speed_gts > 0 && speed_gts > 0 && speed_gts + 1e-6 < max_speed_gts; }
};

}  // namespace gpunoise::model
