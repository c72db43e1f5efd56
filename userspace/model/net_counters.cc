#include "model/net_counters.h"

#include <tuple>
#include <utility>

namespace gpunoise::model {

std::string_view NetDirectionName(NetDirection dir) {
  switch (dir) {
    case NetDirection::kRx: return "rx";
    case NetDirection::kTx: return "tx";
    case NetDirection::kQueued: return "queued";
    case NetDirection::kTxTimeout: return "tx_timeout";
  }
  return "?";
}

std::string DeviceLabel(const NetDeviceKey& dev, const NetNames& names) {
  std::string base;
  if (dev.ifindex == 0) {
    base = "(no-device)";
  } else if (auto it = names.devices.find(dev); it != names.devices.end() && !it->second.empty()) {
    base = it->second;
  } else {
    base = "if" + std::to_string(dev.ifindex);
  }
  if (dev.netns != names.own_netns && dev.netns != 0) base += "@" + std::to_string(dev.netns);
  return base;
}

std::string DropReasonLabel(uint32_t reason, const NetNames& names) {
  if (auto it = names.drop_reasons.find(reason); it != names.drop_reasons.end()) return it->second;
  return "REASON_" + std::to_string(reason);
}

std::map<NetDeviceKey, DeviceTotals> TotalsByDevice(const NetSnapshot& s) {
  std::map<NetDeviceKey, DeviceTotals> out;
  for (const auto& d : s.devices) {
    DeviceTotals& t = out[d.dev];
    const bool device_wide = d.cpu == kDeviceWideCpu;
    t.from_device_statistics = t.from_device_statistics || device_wide;
    switch (d.dir) {
      case NetDirection::kRx:
        t.rx_packets += d.packets;
        t.rx_bytes += d.bytes;
        if (!device_wide) t.rx_packets_by_cpu[d.cpu] += d.packets;
        break;
      case NetDirection::kTx:
        t.tx_packets += d.packets;
        t.tx_bytes += d.bytes;
        t.tx_errors += d.errors;
        break;
      case NetDirection::kQueued:
        t.queued_packets += d.packets;
        t.queued_bytes += d.bytes;
        break;
      case NetDirection::kTxTimeout:
        t.tx_timeouts += d.packets;
        break;
    }
  }
  for (const auto& n : s.napi) {
    DeviceTotals& t = out[n.dev];
    t.napi_polls += n.polls;
    t.napi_full_budget += n.full_budget;
    t.napi_work += n.work;
    t.napi_work_by_cpu[n.cpu] += n.work;
  }
  for (const auto& d : s.drops) out[d.dev].drops_by_reason[d.reason] += d.packets;
  return out;
}

bool IsIdle(const DeviceTotals& t) {
  for (const auto& [reason, n] : t.drops_by_reason)
    if (n) return false;
  return !t.rx_packets && !t.rx_bytes && !t.tx_packets && !t.tx_bytes && !t.tx_errors && !t.queued_packets &&
         !t.queued_bytes && !t.tx_timeouts && !t.napi_polls && !t.napi_work;
}

namespace {

uint64_t Minus(uint64_t later, uint64_t earlier) { return later >= earlier ? later - earlier : later; }

auto Key(const DeviceQueueCount& d) { return std::make_tuple(d.dev, d.queue, d.dir, d.cpu); }
auto Key(const NapiCount& n) { return std::make_tuple(n.dev, n.napi_id, n.queue, n.irq, n.cpu); }
auto Key(const DropCount& d) { return std::make_tuple(d.dev, d.reason, d.location, d.cpu); }
auto Key(const NicEventCount& n) { return std::make_tuple(n.event, n.device, n.cpu); }

template <typename T, typename Sub>
std::vector<T> DeltaOf(const std::vector<T>& earlier, const std::vector<T>& later, Sub sub) {
  std::map<decltype(Key(std::declval<T>())), const T*> before;
  for (const T& e : earlier) before.emplace(Key(e), &e);
  std::vector<T> out;
  out.reserve(later.size());
  for (const T& l : later) {
    T d = l;
    if (auto it = before.find(Key(l)); it != before.end()) sub(d, *it->second);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

NetSnapshot Delta(const NetSnapshot& earlier, const NetSnapshot& later) {
  NetSnapshot out;
  out.ts = later.ts;
  out.devices = DeltaOf(earlier.devices, later.devices, [](DeviceQueueCount& d, const auto& e) {
    d.packets = Minus(d.packets, e.packets);
    d.bytes = Minus(d.bytes, e.bytes);
    d.errors = Minus(d.errors, e.errors);
  });
  out.napi = DeltaOf(earlier.napi, later.napi, [](NapiCount& d, const auto& e) {
    d.polls = Minus(d.polls, e.polls);
    d.full_budget = Minus(d.full_budget, e.full_budget);
    d.work = Minus(d.work, e.work);
  });
  out.drops = DeltaOf(earlier.drops, later.drops, [](DropCount& d, const auto& e) {
    d.packets = Minus(d.packets, e.packets);
    d.bytes = Minus(d.bytes, e.bytes);
  });
  out.nic = DeltaOf(earlier.nic, later.nic,
                    [](NicEventCount& d, const auto& e) { d.count = Minus(d.count, e.count); });
  return out;
}

std::map<NetDeviceKey, DeviceRates> RatesByDevice(const NetSnapshot& earlier,
                                                  const NetSnapshot& later) {
  std::map<NetDeviceKey, DeviceRates> out;
  if (later.ts <= earlier.ts) return out;
  const double seconds = static_cast<double>(later.ts - earlier.ts) / 1e9;
  auto per_s = [&](uint64_t n) { return static_cast<double>(n) / seconds; };
  auto gbit_per_s = [&](uint64_t bytes) { return static_cast<double>(bytes) * 8 / 1e9 / seconds; };
  for (const auto& [dev, t] : TotalsByDevice(Delta(earlier, later))) {
    DeviceRates& r = out[dev];
    r.rx_packets_per_s = per_s(t.rx_packets);
    r.rx_gbit_per_s = gbit_per_s(t.rx_bytes);
    r.tx_packets_per_s = per_s(t.tx_packets);
    r.tx_gbit_per_s = gbit_per_s(t.tx_bytes);
    r.tx_errors_per_s = per_s(t.tx_errors);
    r.queued_packets_per_s = per_s(t.queued_packets);
    r.napi_polls_per_s = per_s(t.napi_polls);
    r.napi_full_budget_per_s = per_s(t.napi_full_budget);
    r.napi_packets_per_s = per_s(t.napi_work);
    r.tx_timeouts = t.tx_timeouts;
    for (const auto& [reason, n] : t.drops_by_reason) r.drops_per_s[reason] = per_s(n);
    for (const auto& [cpu, n] : t.napi_work_by_cpu) r.napi_packets_per_s_by_cpu[cpu] = per_s(n);
    for (const auto& [cpu, n] : t.rx_packets_by_cpu) r.rx_packets_per_s_by_cpu[cpu] = per_s(n);
  }
  return out;
}

}  // namespace gpunoise::model
