// The reading side of the drain's doorbell (bpf/doorbell.bpf.h): an fd that
// polls readable once a kernel program rang, and a way to empty it. The
// drain's guard waits on it (record/drain_priority.h).
#pragma once

#include <memory>

#include "common/result.h"

namespace gpunoise::collect {

class Doorbell {
 public:
  virtual ~Doorbell() = default;
  // Polls readable (EPOLLIN) while a ring is unread.
  virtual int fd() const = 0;
  // Reads every ring so far.
  virtual void Clear() = 0;
};

// The doorbell ring behind `map_fd` (a BPF_MAP_TYPE_RINGBUF), read through a
// duplicate of the fd and a mapping of its own, so it outlives the map's
// owner.
Result<std::unique_ptr<Doorbell>> OpenRingDoorbell(int map_fd);

}  // namespace gpunoise::collect
