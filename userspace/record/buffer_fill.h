#pragma once

#include <cstdint>

namespace gpunoise::record {

// What a drain turn found in one kind of per-CPU buffer that the kernel
// fills and the drain empties (the rings, an in-kernel log), in that
// buffer's own unit (bytes, entries).
struct BufferFill {
  uint64_t held = 0;      // the fullest CPU's buffer, when read
  uint64_t produced = 0;  // written to the busiest CPU's buffer since the turn before
  uint64_t capacity = 0;  // one CPU's buffer
};

}  // namespace gpunoise::record
