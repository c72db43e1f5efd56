// User space's side of the network counters' per-CPU caches
// (bpf/agg_cache.bpf.h): sized before load, mapped after, read slot by slot
// while the kernel counts into them, and freed for devices that are gone.
#pragma once

#include <bpf/libbpf.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <string_view>

#include "collect/mapped_map.h"
#include "model/net_counters.h"

extern "C" {
#include "bpf/net.h"
}

namespace gpunoise::collect {

// A struct of 64-bit words read one word at a time, each word whole: the
// kernel adds to a slot's value while it is read.
template <typename T>
T LoadWords(const void* from) {
  static_assert(sizeof(T) % sizeof(uint64_t) == 0);
  std::array<uint64_t, sizeof(T) / sizeof(uint64_t)> words;
  const auto* src = static_cast<const uint64_t*>(from);
  for (size_t i = 0; i < words.size(); ++i) words[i] = __atomic_load_n(src + i, __ATOMIC_RELAXED);
  T out;
  std::memcpy(&out, words.data(), sizeof(T));
  return out;
}

// Adds counter values field by field (all of them 64-bit counts).
template <typename Value>
void AddCounts(Value& into, const Value& more) {
  static_assert(sizeof(Value) % sizeof(uint64_t) == 0);
  std::array<uint64_t, sizeof(Value) / sizeof(uint64_t)> a, b;
  std::memcpy(a.data(), &into, sizeof(Value));
  std::memcpy(b.data(), &more, sizeof(Value));
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  std::memcpy(&into, a.data(), sizeof(Value));
}

class AggCache {
 public:
  // Before load: slots for every possible CPU. Where that fails, says so
  // for `collector`: the map keeps one CPU's slots and the other CPUs count
  // in the hash map.
  void Size(bpf_map* map, std::string_view collector);
  // After a load that returned `loaded` (0 or -errno): maps the slots
  // read-write (Forget frees slots). Returns what the load reports: a
  // mapping that failed fails the load, since the programs would count
  // where nothing reads.
  int MapAfterLoad(int loaded, const bpf_map* map, size_t slot_size);

  // Calls fn(slot, cpu) for each slot a key owns.
  template <typename Slot, typename Fn>
  void ForEachOwned(Fn fn) const {
    ForEachOwnedAt<Slot>([&](const Slot& slot, uint32_t cpu, uint64_t*) { fn(slot, cpu); });
  }

  // Frees the slots of keys whose device is in `gone` (a device that is
  // gone counts no more, so its slot is written by no program); returns
  // how many.
  template <typename Slot>
  size_t Forget(const std::set<model::NetDeviceKey>& gone) {
    if (gone.empty()) return 0;
    size_t freed = 0;
    ForEachOwnedAt<Slot>([&](const Slot& slot, uint32_t, uint64_t* state) {
      if (!gone.count(model::NetDeviceKey{slot.key.dev.netns, slot.key.dev.ifindex})) return;
      __atomic_store_n(state, uint64_t{GN_AGG_SLOT_FREE}, __ATOMIC_RELEASE);
      ++freed;
    });
    return freed;
  }

 private:
  template <typename Slot, typename Fn>
  void ForEachOwnedAt(Fn fn) const {
    static_assert(offsetof(Slot, state) == 0 && offsetof(Slot, key) == sizeof(uint64_t) &&
                  offsetof(Slot, val) == sizeof(uint64_t) + sizeof(Slot::key));
    if (!mapping_.addr) return;
    auto* base = static_cast<uint8_t*>(mapping_.addr);
    for (uint32_t cpu = 0; cpu < ncpus_; ++cpu)
      for (uint32_t i = 0; i < GN_AGG_CACHE_SLOTS; ++i) {
        auto* state = reinterpret_cast<uint64_t*>(base + (size_t{cpu} * GN_AGG_CACHE_SLOTS + i) * sizeof(Slot));
        // The state first, with acquire: a slot seen owned has its key.
        if (__atomic_load_n(state, __ATOMIC_ACQUIRE) != GN_AGG_SLOT_OWNED) continue;
        fn(LoadWords<Slot>(state), cpu, state);
      }
  }

  MappedMap mapping_;
  uint32_t ncpus_ = 0;
};

}  // namespace gpunoise::collect
