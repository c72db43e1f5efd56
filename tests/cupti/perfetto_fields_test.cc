// The hand-written encoder's field numbers must be the subset schema's,
// which field_numbers_test.cc pins to upstream.
#include "cupti/perfetto_fields.h"

#include <gtest/gtest.h>

#include "common/proto_wire.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::cupti {
namespace {

namespace p = ::gpunoise::perfetto;

TEST(PerfettoFields, MatchTheSubsetSchema) {
  EXPECT_EQ(pf::kPacketClockSnapshot, p::TracePacket::kClockSnapshotFieldNumber);
  EXPECT_EQ(pf::kPacketTimestamp, p::TracePacket::kTimestampFieldNumber);
  EXPECT_EQ(pf::kPacketTrustedPacketSequenceId, p::TracePacket::kTrustedPacketSequenceIdFieldNumber);
  EXPECT_EQ(pf::kPacketTrackEvent, p::TracePacket::kTrackEventFieldNumber);
  EXPECT_EQ(pf::kPacketSequenceFlags, p::TracePacket::kSequenceFlagsFieldNumber);
  EXPECT_EQ(pf::kPacketTrackDescriptor, p::TracePacket::kTrackDescriptorFieldNumber);
  EXPECT_EQ(pf::kPacketFirstPacketOnSequence, p::TracePacket::kFirstPacketOnSequenceFieldNumber);
  EXPECT_EQ(pf::kSeqIncrementalStateCleared, p::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);

  EXPECT_EQ(pf::kClockSnapshotClocks, p::ClockSnapshot::kClocksFieldNumber);
  EXPECT_EQ(pf::kClockSnapshotPrimaryTraceClock, p::ClockSnapshot::kPrimaryTraceClockFieldNumber);
  EXPECT_EQ(pf::kClockClockId, p::ClockSnapshot_Clock::kClockIdFieldNumber);
  EXPECT_EQ(pf::kClockTimestamp, p::ClockSnapshot_Clock::kTimestampFieldNumber);
  EXPECT_EQ(pf::kBuiltinClockRealtime, p::BUILTIN_CLOCK_REALTIME);
  EXPECT_EQ(pf::kBuiltinClockMonotonic, p::BUILTIN_CLOCK_MONOTONIC);
  EXPECT_EQ(pf::kBuiltinClockBoottime, p::BUILTIN_CLOCK_BOOTTIME);

  EXPECT_EQ(pf::kTrackUuid, p::TrackDescriptor::kUuidFieldNumber);
  EXPECT_EQ(pf::kTrackName, p::TrackDescriptor::kNameFieldNumber);
  EXPECT_EQ(pf::kTrackProcess, p::TrackDescriptor::kProcessFieldNumber);
  EXPECT_EQ(pf::kTrackThread, p::TrackDescriptor::kThreadFieldNumber);
  EXPECT_EQ(pf::kTrackParentUuid, p::TrackDescriptor::kParentUuidFieldNumber);
  EXPECT_EQ(pf::kTrackCounter, p::TrackDescriptor::kCounterFieldNumber);
  EXPECT_EQ(pf::kTrackChildOrdering, p::TrackDescriptor::kChildOrderingFieldNumber);
  EXPECT_EQ(pf::kTrackSiblingOrderRank, p::TrackDescriptor::kSiblingOrderRankFieldNumber);
  EXPECT_EQ(pf::kTrackDescription, p::TrackDescriptor::kDescriptionFieldNumber);
  EXPECT_EQ(pf::kChildOrderingExplicit, p::TrackDescriptor::EXPLICIT);

  EXPECT_EQ(pf::kProcessPid, p::ProcessDescriptor::kPidFieldNumber);
  EXPECT_EQ(pf::kProcessName, p::ProcessDescriptor::kProcessNameFieldNumber);
  EXPECT_EQ(pf::kThreadPid, p::ThreadDescriptor::kPidFieldNumber);
  EXPECT_EQ(pf::kThreadTid, p::ThreadDescriptor::kTidFieldNumber);
  EXPECT_EQ(pf::kThreadName, p::ThreadDescriptor::kThreadNameFieldNumber);
  EXPECT_EQ(pf::kCounterUnit, p::CounterDescriptor::kUnitFieldNumber);
  EXPECT_EQ(pf::kCounterUnitName, p::CounterDescriptor::kUnitNameFieldNumber);
  EXPECT_EQ(pf::kCounterUnitCount, p::CounterDescriptor::UNIT_COUNT);

  EXPECT_EQ(pf::kEventDebugAnnotations, p::TrackEvent::kDebugAnnotationsFieldNumber);
  EXPECT_EQ(pf::kEventType, p::TrackEvent::kTypeFieldNumber);
  EXPECT_EQ(pf::kEventTrackUuid, p::TrackEvent::kTrackUuidFieldNumber);
  EXPECT_EQ(pf::kEventCategories, p::TrackEvent::kCategoriesFieldNumber);
  EXPECT_EQ(pf::kEventName, p::TrackEvent::kNameFieldNumber);
  EXPECT_EQ(pf::kEventDoubleCounterValue, p::TrackEvent::kDoubleCounterValueFieldNumber);
  EXPECT_EQ(pf::kEventFlowIds, p::TrackEvent::kFlowIdsFieldNumber);
  EXPECT_EQ(pf::kEventTerminatingFlowIds, p::TrackEvent::kTerminatingFlowIdsFieldNumber);
  EXPECT_EQ(pf::kEventCorrelationIdStr, p::TrackEvent::kCorrelationIdStrFieldNumber);
  EXPECT_EQ(pf::kTypeSliceBegin, p::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(pf::kTypeSliceEnd, p::TrackEvent::TYPE_SLICE_END);
  EXPECT_EQ(pf::kTypeInstant, p::TrackEvent::TYPE_INSTANT);
  EXPECT_EQ(pf::kTypeCounter, p::TrackEvent::TYPE_COUNTER);

  EXPECT_EQ(pf::kArgBoolValue, p::DebugAnnotation::kBoolValueFieldNumber);
  EXPECT_EQ(pf::kArgUintValue, p::DebugAnnotation::kUintValueFieldNumber);
  EXPECT_EQ(pf::kArgIntValue, p::DebugAnnotation::kIntValueFieldNumber);
  EXPECT_EQ(pf::kArgDoubleValue, p::DebugAnnotation::kDoubleValueFieldNumber);
  EXPECT_EQ(pf::kArgStringValue, p::DebugAnnotation::kStringValueFieldNumber);
  EXPECT_EQ(pf::kArgName, p::DebugAnnotation::kNameFieldNumber);
}

TEST(ProtoWriter, PaddedNestedLengthsAndNegativeIntsDecode) {
  std::string packet;
  ProtoWriter w(&packet);
  w.Varint(pf::kPacketTimestamp, 1ull << 40);
  size_t event = w.BeginNested(pf::kPacketTrackEvent);
  size_t arg = w.BeginNested(pf::kEventDebugAnnotations);
  w.Bytes(pf::kArgName, "delta");
  w.Int(pf::kArgIntValue, -5);
  w.EndNested(arg);
  std::string long_name(300, 'k');  // a length that needs two varint bytes
  w.Bytes(pf::kEventName, long_name);
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
