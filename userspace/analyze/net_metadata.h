// What gpunoise's network collectors leave in a trace besides events
// (docs/network.md, "Trace format"): counter tracks whose identity names
// device and metric (rates per sampling interval, tx timeouts cumulative),
// and instants on the network metadata track: the NIC IRQ map ("irq"), NAPI
// instances per CPU ("napi"), per-device totals ("net device") and drops by
// reason and code location ("net drop").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/timeline.h"

namespace gpunoise::analyze {

struct NetIrq {
  int32_t irq = -1;
  std::string name, device, queue_kind;
  int32_t queue = -1;
  std::vector<uint32_t> affinity, effective_affinity;
};

struct NapiInstance {
  std::string device;
  int32_t queue = -1, irq = -1;
  uint32_t cpu = 0;
  uint64_t polls = 0, full_budget_polls = 0, packets = 0;
};

struct DeviceTotals {
  std::string device;
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0, tx_errors = 0;
  uint64_t tx_timeouts = 0, napi_polls = 0, napi_full_budget_polls = 0, napi_packets = 0, drops = 0;
  std::map<std::string, uint64_t> drops_by_reason;
  bool packets_counted = true;  // false: rx and tx were not counted (not zero)
};

struct DropSite {
  std::string device, reason, location;
  uint64_t packets = 0;
};

// A network counter track, by its identity (model/track_identity.h).
struct NetCounter {
  std::string device;  // "eth0"
  model::NetMetric metric = model::NetMetric::kUnknown;
  int32_t cpu = -1;    // per-CPU metrics
  std::string detail;  // kDrops: the reason ("SOCKET_RCVBUFF"); kNicEvents/kNicCounter: the event or counter
  const std::vector<CounterSample>* samples = nullptr;
};

struct NetMetadata {
  std::vector<NetIrq> irqs;
  std::vector<NapiInstance> napi;
  std::vector<DeviceTotals> devices;
  std::vector<DropSite> drops;
  std::vector<NetCounter> counters;
  bool empty() const { return irqs.empty() && napi.empty() && devices.empty() && counters.empty(); }
};

NetMetadata ReadNetMetadata(const Timeline& t);

// A rate counter's samples each hold the average rate from their time to
// the next sample's. These integrate and bound them over [from, to).
double IntegrateRate(const std::vector<CounterSample>& samples, uint64_t from, uint64_t to);
struct CounterPeak {
  double value = 0;
  uint64_t start = 0, end = 0;  // the sample interval it holds for
};
CounterPeak PeakRate(const std::vector<CounterSample>& samples, uint64_t from, uint64_t to);
// A cumulative counter's rise within [from, to), for the network
// collectors' counters, whose track only starts at the first non-zero value
// (so a first sample inside the window rose from zero).
double Increase(const std::vector<CounterSample>& samples, uint64_t from, uint64_t to);
// A cumulative counter's rise within [from, to) over its first sample (or the
// last one before `from`): for counters sampled from the start, such as the
// kernel's warn_count, which is not zero at boot + 1 week.
double RiseOverBaseline(const std::vector<CounterSample>& samples, uint64_t from, uint64_t to);

// "0-3,8" -> {0,1,2,3,8}: ParseCpuList item by item, skipping items it rejects.
std::vector<uint32_t> ParseCpuListArg(std::string_view text);

}  // namespace gpunoise::analyze
