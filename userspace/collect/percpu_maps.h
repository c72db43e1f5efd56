// Reading per-CPU BPF maps: one lookup returns every possible CPU's value
// (bpftrace's bpfmap.cpp does the same), and the caller reduces.
#pragma once

#include <bpf/libbpf.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace gpunoise::collect {

// Every possible CPU's value of `key` in a BPF_MAP_TYPE_PERCPU_ARRAY (empty
// when the lookup fails). Index = CPU number.
template <typename Value>
std::vector<Value> ReadPerCpuArray(const bpf_map* map, uint32_t key) {
  std::vector<Value> out;
  const int ncpus = libbpf_num_possible_cpus();
  if (!map || ncpus <= 0) return out;
  // The kernel rounds each CPU's value up to 8 bytes.
  const size_t stride = (sizeof(Value) + 7) / 8 * 8;
  std::vector<uint8_t> raw(stride * static_cast<size_t>(ncpus));
  if (bpf_map__lookup_elem(map, &key, sizeof(key), raw.data(), raw.size(), 0) != 0) return out;
  out.resize(static_cast<size_t>(ncpus));
  for (size_t cpu = 0; cpu < out.size(); ++cpu) std::memcpy(&out[cpu], raw.data() + stride * cpu, sizeof(Value));
  return out;
}

// Keys of a hash map (any kind), collected first so the caller may delete
// while it goes through them.
template <typename Key>
std::vector<Key> MapKeys(const bpf_map* map) {
  std::vector<Key> keys;
  if (!map) return keys;
  Key key{}, next{};
  const Key* prev = nullptr;
  while (bpf_map__get_next_key(map, prev, &next, sizeof(Key)) == 0) {
    keys.push_back(next);
    key = next;
    prev = &key;
  }
  return keys;
}

// Every possible CPU's value of `key` in a BPF_MAP_TYPE_PERCPU_HASH;
// false when the key is gone.
template <typename Key, typename Value>
bool ReadPerCpuHash(const bpf_map* map, const Key& key, std::vector<Value>* out) {
  const int ncpus = libbpf_num_possible_cpus();
  if (!map || ncpus <= 0) return false;
  const size_t stride = (sizeof(Value) + 7) / 8 * 8;
  std::vector<uint8_t> raw(stride * static_cast<size_t>(ncpus));
  if (bpf_map__lookup_elem(map, &key, sizeof(Key), raw.data(), raw.size(), 0) != 0) return false;
  out->resize(static_cast<size_t>(ncpus));
  for (size_t cpu = 0; cpu < out->size(); ++cpu)
    std::memcpy(&(*out)[cpu], raw.data() + stride * cpu, sizeof(Value));
  return true;
}

}  // namespace gpunoise::collect
