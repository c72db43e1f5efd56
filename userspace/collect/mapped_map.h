// A BPF array map (BPF_F_MMAPABLE) mapped into the recorder: how the
// span-log collectors (kwork, cpustate) read what their programs write
// without a ring record or a wakeup per event (collect/seq_ring.h), and the
// network counters' per-CPU caches (collect/agg_cache.h).
#pragma once

#include <cstddef>

namespace gpunoise::collect {

struct MappedMap {
  void* addr = nullptr;  // nullptr until Map succeeded
  size_t size = 0;

  MappedMap() = default;
  MappedMap(const MappedMap&) = delete;
  MappedMap& operator=(const MappedMap&) = delete;
  ~MappedMap();

  // Maps the first `bytes` (rounded up to pages) of the map behind `fd`,
  // read-only unless `writable`; false with errno set when the kernel
  // refuses.
  bool Map(int fd, size_t bytes, bool writable = false);
};

}  // namespace gpunoise::collect
