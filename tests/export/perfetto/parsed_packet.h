// What the project's encoder wrote, read back by libprotobuf's classes of the
// same .proto subset: a decoder independent of the project's own, so a writer
// test checks the bytes, not the codec against itself.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/trace_packet_builder.h"

namespace gpunoise::perfetto {

inline TracePacket Parsed(const TracePacketBuilder& built) {
  TracePacket p;
  std::string_view bytes = built.bytes();
  EXPECT_TRUE(p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  return p;
}

}  // namespace gpunoise::perfetto
