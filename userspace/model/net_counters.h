// The network counters the kernel keeps per device, queue and CPU (bpf/net.h
// aggregates), read as cumulative snapshots, and the per-device rates and
// totals computed from two snapshots. Pure data and functions: the report
// and the OpenMetrics exporter can use them on counters read back from a
// trace.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpunoise::model {

struct NetDeviceKey {
  uint32_t netns = 0;
  uint32_t ifindex = 0;  // 0: packets that had no device (socket-level drops)
  auto operator<=>(const NetDeviceKey&) const = default;
};

enum class NetDirection : uint32_t {
  kRx = 0,         // netif_receive_skb
  kTx = 1,         // net_dev_xmit accepted by the driver
  kQueued = 2,     // net_dev_queue: handed to the qdisc layer
  kTxTimeout = 3,  // net_dev_xmit_timeout
};
inline constexpr uint32_t kNumNetDirections = 4;
std::string_view NetDirectionName(NetDirection dir);  // "rx", "tx", "queued", "tx_timeout"

// The `cpu` of a count the device itself keeps (its statistics, read over
// netlink): one entry per device and direction, for all its queues and CPUs.
inline constexpr uint32_t kDeviceWideCpu = UINT32_MAX;

// Cumulative since the collector started; one entry per CPU that saw any
// (or one with kDeviceWideCpu, from the device's own statistics).
struct DeviceQueueCount {
  NetDeviceKey dev;
  int32_t queue = -1;
  NetDirection dir = NetDirection::kRx;
  uint32_t cpu = 0;
  uint64_t packets = 0;
  uint64_t bytes = 0;
  uint64_t errors = 0;
};

struct NapiCount {
  NetDeviceKey dev;
  uint32_t napi_id = 0;
  int32_t queue = -1;
  int32_t irq = -1;
  uint32_t cpu = 0;
  uint64_t polls = 0;
  uint64_t full_budget = 0;
  uint64_t work = 0;
};

struct DropCount {
  NetDeviceKey dev;
  uint32_t reason = 0;
  uint64_t location = 0;
  uint32_t cpu = 0;
  uint64_t packets = 0;
  uint64_t bytes = 0;
};

struct NicEventCount {
  uint32_t event = 0;  // index into NetSnapshot::nic_events
  std::string device;  // as the tracepoint names it; empty when it has none
  uint32_t cpu = 0;
  uint64_t count = 0;
};

struct NetSnapshot {
  uint64_t ts = 0;  // CLOCK_BOOTTIME when read
  std::vector<DeviceQueueCount> devices;
  std::vector<NapiCount> napi;
  std::vector<DropCount> drops;
  std::vector<NicEventCount> nic;
};

// What a snapshot's numbers refer to (filled as devices appear).
struct NetNames {
  uint32_t own_netns = 0;                        // the recorder's namespace
  std::map<NetDeviceKey, std::string> devices;  // kernel device names
  std::vector<std::string> nic_events;           // "mlx5/mlx5e_rx_..." by index
  std::map<uint32_t, std::string> drop_reasons;  // enum skb_drop_reason -> "SOCKET_RCVBUFF"
  std::map<uint64_t, std::string> drop_locations;  // address -> "udp_queue_rcv_one_skb+0x3c"
  // Packets and bytes of every device were counted (per packet, in every
  // namespace); false: only those whose own statistics were read.
  bool packets_counted_everywhere = true;
};

// names.drop_reasons[reason], else "REASON_<n>".
std::string DropReasonLabel(uint32_t reason, const NetNames& names);

// "eth0" for a device in the recorder's own namespace, "eth0@4026532801"
// for one in another, "if7@4026532801" when the name is unknown, and
// "(no-device)" (with "@NETNS" when known and not ours) for ifindex 0: NAPI
// polls of the per-CPU backlog (netif_rx, RPS) and drops of packets that had
// no device. Labels never contain spaces, so a label is the part of a
// counter-track name before its first space.
std::string DeviceLabel(const NetDeviceKey& dev, const NetNames& names);

// Sums over queues and CPUs, per device.
struct DeviceTotals {
  uint64_t rx_packets = 0, rx_bytes = 0;
  uint64_t tx_packets = 0, tx_bytes = 0, tx_errors = 0;
  uint64_t queued_packets = 0, queued_bytes = 0;
  uint64_t tx_timeouts = 0;
  uint64_t napi_polls = 0, napi_full_budget = 0, napi_work = 0;
  std::map<uint32_t, uint64_t> drops_by_reason;
  std::map<uint32_t, uint64_t> napi_work_by_cpu;
  std::map<uint32_t, uint64_t> rx_packets_by_cpu;
  // Packets and bytes are the device's own statistics, not counted per
  // packet by gpunoise's programs (so there is no per-queue or per-CPU split).
  bool from_device_statistics = false;
};
std::map<NetDeviceKey, DeviceTotals> TotalsByDevice(const NetSnapshot& snapshot);
// Nothing counted: no packet, byte, error, timeout, NAPI poll or drop.
bool IsIdle(const DeviceTotals& t);

// `later` minus `earlier`, entry by entry (an entry missing from `earlier`
// counts from zero). Counters never go down; a smaller value (a collector
// restarted) gives that entry's full `later` value.
NetSnapshot Delta(const NetSnapshot& earlier, const NetSnapshot& later);

// Rates over one interval, from the delta of two snapshots.
struct DeviceRates {
  double rx_packets_per_s = 0, rx_gbit_per_s = 0;
  double tx_packets_per_s = 0, tx_gbit_per_s = 0, tx_errors_per_s = 0;
  double queued_packets_per_s = 0;
  double napi_polls_per_s = 0, napi_full_budget_per_s = 0, napi_packets_per_s = 0;
  uint64_t tx_timeouts = 0;  // in the interval
  std::map<uint32_t, double> drops_per_s;  // by reason
  std::map<uint32_t, double> napi_packets_per_s_by_cpu;
  std::map<uint32_t, double> rx_packets_per_s_by_cpu;
};
std::map<NetDeviceKey, DeviceRates> RatesByDevice(const NetSnapshot& earlier,
                                                  const NetSnapshot& later);

}  // namespace gpunoise::model
