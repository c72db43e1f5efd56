// A BPF array map (BPF_F_MMAPABLE) mapped read-only into the recorder: how
// the span-log collectors (kwork, cpustate) read what their programs write
// without a ring record or a wakeup per event (collect/seq_ring.h).
#pragma once

#include <cstddef>

namespace gpunoise::collect {

struct MappedMap {
  const void* addr = nullptr;  // nullptr until Map succeeded
  size_t size = 0;

  MappedMap() = default;
  MappedMap(const MappedMap&) = delete;
  MappedMap& operator=(const MappedMap&) = delete;
  ~MappedMap();

  // Maps the first `bytes` (rounded up to pages) of the map behind `fd`;
  // false with errno set when the kernel refuses.
  bool Map(int fd, size_t bytes);
};

}  // namespace gpunoise::collect
