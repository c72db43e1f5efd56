#include "collect/agg_cache.h"

#include <cerrno>

#include "common/log.h"

namespace gpunoise::collect {

void AggCache::Size(bpf_map* map, std::string_view collector) {
  const int possible = libbpf_num_possible_cpus();
  if (map && possible > 0 &&
      bpf_map__set_max_entries(map, static_cast<uint32_t>(possible) * GN_AGG_CACHE_SLOTS) == 0)
    return;
  log::Warning("{}: the counter cache has slots for one CPU only; the others count in the hash map", collector);
}

int AggCache::MapAfterLoad(int loaded, const bpf_map* map, size_t slot_size) {
  if (loaded != 0) return loaded;
  if (!map || bpf_map__value_size(map) != slot_size) return -EINVAL;
  const uint32_t entries = bpf_map__max_entries(map);
  if (!mapping_.Map(bpf_map__fd(map), size_t{entries} * slot_size, /*writable=*/true)) return -errno;
  ncpus_ = entries / GN_AGG_CACHE_SLOTS;
  return 0;
}

}  // namespace gpunoise::collect
