// Where and why a packet could not be decoded: the offset is relative to the
// start of the packet's payload, so the reader can name a file byte offset.
#pragma once

#include <cstddef>
#include <string>

namespace gpunoise::import {

struct PacketError {
  size_t offset = 0;
  std::string what;  // "FtraceEventBundle: compact_sched column 3 is malformed"
};

}  // namespace gpunoise::import
