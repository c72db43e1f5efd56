// What the network collectors (bpf/napi, netdev, drops, nic) share: options,
// the per-CPU aggregate maps they expose to the drain loop, and the names of
// the devices they have seen.
#pragma once

#include <bpf/libbpf.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collect/agg_cache.h"
#include "collect/collector.h"
#include "model/net_counters.h"

extern "C" {
#include "bpf/net.h"
}

namespace gpunoise::collect {

struct NetOptions {
  // Per-packet ring records (`--events net-packets`); off: aggregates only.
  bool packets = false;
  // `--net-dev`: per-packet records only for these device names.
  std::vector<std::string> devices;
  // `--nic-tracepoints`: tracefs categories to treat as NIC drivers;
  // empty: the built-in list (NicCollector::kKnownDriverCategories).
  std::vector<std::string> nic_categories;
  // A ring record per TCP retransmission (always on for `record`; the
  // monitor, which keeps no per-event records in steady state, turns it off).
  bool retransmits = true;
  // Packets and bytes per device, queue, direction and CPU from a program
  // on every packet (netif_receive_skb, net_dev_xmit). The monitor turns it
  // off by default (it reads device statistics instead); TX timeouts are
  // counted either way.
  bool device_counters = true;
};

class NetCollector : public Collector {
 public:
  // Appends this collector's cumulative per-CPU counters to `out`.
  virtual void ReadCounters(model::NetSnapshot* out) const = 0;
  // Adds the device names the kernel side recorded (first name seen).
  virtual void ReadDeviceNames(std::map<model::NetDeviceKey, std::string>* /*out*/) const {}
  // Deletes the kernel's counters and name of devices that are gone, so a
  // long-running monitor's maps stay bounded while devices come and go
  // (veth pairs of containers). Returns the entries deleted.
  virtual size_t ForgetDevices(const std::set<model::NetDeviceKey>& /*gone*/) { return 0; }

 protected:
  using Collector::Collector;
};

// Sets the rodata every network object shares (bpf/net.bpf.h).
template <typename Skel>
void ApplyNetConfig(Skel* skel, const NetOptions& options) {
  skel->rodata->gn_net_packets = options.packets;
  uint32_t n = 0;
  for (const std::string& dev : options.devices) {
    if (n >= GN_NET_DEV_FILTER_MAX) break;
    std::strncpy(const_cast<char*>(skel->rodata->gn_net_dev_filter[n]), dev.c_str(),
                 GN_NET_NAME_LEN - 1);
    ++n;
  }
  skel->rodata->gn_net_dev_filter_count = n;
}

// The network collectors' aggregate maps that were full (bpf/net.bpf.h
// gn_agg_full counts refusals of any of them).
template <typename Skel>
void AddNetMapFull(const Skel* skel, std::string_view collector, std::vector<model::MapLoss>& out) {
  if (skel && skel->bss) AddFullMap(out, collector, "aggregates", SumPerCpuCounter(skel->bss->gn_agg_full));
}

// Calls fn(key, cpu, value) for every CPU's non-zero value of every key of a
// BPF_MAP_TYPE_PERCPU_HASH. Keys are only ever added, so walking with
// get_next_key while the kernel updates values is safe.
template <typename Key, typename Value, typename Fn>
void ForEachPerCpuValue(const bpf_map* map, Fn fn) {
  if (!map) return;
  const int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) return;
  const size_t stride = (sizeof(Value) + 7) / 8 * 8;
  std::vector<uint8_t> values(stride * static_cast<size_t>(ncpus));
  Key key{}, next{};
  const Key* prev = nullptr;
  while (bpf_map__get_next_key(map, prev, &next, sizeof(Key)) == 0) {
    key = next;
    prev = &key;
    if (bpf_map__lookup_elem(map, &key, sizeof(Key), values.data(), values.size(), 0) != 0)
      continue;
    for (int cpu = 0; cpu < ncpus; ++cpu) {
      Value v;
      std::memcpy(&v, values.data() + stride * static_cast<size_t>(cpu), sizeof(Value));
      fn(key, static_cast<uint32_t>(cpu), v);
    }
  }
}

// Calls fn(key, cpu, value) once per key and CPU: the key's count in its
// cache slot on that CPU, if it owns one, plus its hash map entry
// (bpf/agg_cache.bpf.h says why a count can be in both).
template <typename Slot, typename Fn>
void ForEachCount(const bpf_map* hash, const AggCache& cache, Fn fn) {
  using Key = decltype(Slot::key);
  using Value = decltype(Slot::val);
  using KeyBytes = std::array<uint8_t, sizeof(Key)>;
  auto bytes = [](const Key& k) {
    KeyBytes b;
    std::memcpy(b.data(), &k, sizeof(Key));
    return b;
  };
  std::map<std::pair<KeyBytes, uint32_t>, Slot> cached;
  cache.ForEachOwned<Slot>(
      [&](const Slot& slot, uint32_t cpu) { cached.emplace(std::pair{bytes(slot.key), cpu}, slot); });
  ForEachPerCpuValue<Key, Value>(hash, [&](const Key& key, uint32_t cpu, const Value& value) {
    auto it = cached.find({bytes(key), cpu});
    if (it == cached.end())
      fn(key, cpu, value);
    else
      AddCounts(it->second.val, value);
  });
  for (const auto& [where, slot] : cached) fn(slot.key, where.second, slot.val);
}

// Deletes every key of a per-device map whose device is in `gone` (keys
// are collected first: deleting while walking would restart the walk).
template <typename Key>
size_t DeleteDeviceKeys(const bpf_map* map, const std::set<model::NetDeviceKey>& gone) {
  if (!map || gone.empty()) return 0;
  std::vector<Key> doomed;
  Key key{}, next{};
  const Key* prev = nullptr;
  while (bpf_map__get_next_key(map, prev, &next, sizeof(Key)) == 0) {
    key = next;
    prev = &key;
    if (gone.count(model::NetDeviceKey{key.dev.netns, key.dev.ifindex})) doomed.push_back(key);
  }
  size_t deleted = 0;
  for (const Key& k : doomed)
    if (bpf_map__delete_elem(map, &k, sizeof(Key), 0) == 0) ++deleted;
  return deleted;
}

// Deletes the names of devices in `gone` from a gn_net_names map.
size_t DeleteNetNames(const bpf_map* map, const std::set<model::NetDeviceKey>& gone);

// Reads a gn_net_names map (struct gn_net_dev -> struct gn_net_name).
void ReadNetNames(const bpf_map* map, std::map<model::NetDeviceKey, std::string>* out);

}  // namespace gpunoise::collect
