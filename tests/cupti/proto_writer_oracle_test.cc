// What the injection library's encoder writes (common/proto_wire.h, numbers
// from the generated table) decodes with libprotobuf's classes of the subset.
#include <gtest/gtest.h>

#include "common/proto_wire.h"
#include "export/perfetto/protos/perfetto_fields.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::cupti {
namespace {

namespace p = ::gpunoise::perfetto;

TEST(ProtoWriter, PaddedNestedLengthsAndNegativeIntsDecode) {
  std::string packet;
  ProtoWriter w(&packet);
  w.Varint(pf::TracePacket::kTimestamp, 1ull << 40);
  size_t event = w.BeginNested(pf::TracePacket::kTrackEvent);
  size_t arg = w.BeginNested(pf::TrackEvent::kDebugAnnotations);
  w.Bytes(pf::DebugAnnotation::kName, "delta");
  w.Int(pf::DebugAnnotation::kIntValue, -5);
  w.EndNested(arg);
  std::string long_name(300, 'k');  // a length that needs two varint bytes
  w.Bytes(pf::TrackEvent::kName, long_name);
  w.EndNested(event);
  std::string framed;
  AppendFramedPacket(packet, &framed);
  p::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(framed));
  ASSERT_EQ(trace.packet_size(), 1);
  EXPECT_EQ(trace.packet(0).timestamp(), 1ull << 40);
  EXPECT_EQ(trace.packet(0).track_event().name(), long_name);
  ASSERT_EQ(trace.packet(0).track_event().debug_annotations_size(), 1);
  EXPECT_EQ(trace.packet(0).track_event().debug_annotations(0).int_value(), -5);
}

}  // namespace
}  // namespace gpunoise::cupti
