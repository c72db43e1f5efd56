// Field numbers of the Perfetto messages the injection library encodes by
// hand (proto_wire.h). They are upstream's numbers; tests/cupti/
// perfetto_fields_test.cc checks each one against the generated subset
// schema, whose numbers tests/export/perfetto/field_numbers_test.cc pins to
// upstream, so a typo here fails a test instead of losing data silently.
#pragma once

#include <cstdint>

namespace gpunoise::cupti::pf {

// perfetto.protos.TracePacket
inline constexpr uint32_t kPacketClockSnapshot = 6;
inline constexpr uint32_t kPacketTimestamp = 8;
inline constexpr uint32_t kPacketTrustedPacketSequenceId = 10;
inline constexpr uint32_t kPacketTrackEvent = 11;
inline constexpr uint32_t kPacketSequenceFlags = 13;
inline constexpr uint32_t kPacketTrackDescriptor = 60;
inline constexpr uint32_t kPacketFirstPacketOnSequence = 87;
inline constexpr uint64_t kSeqIncrementalStateCleared = 1;  // TracePacket.SequenceFlags

// ClockSnapshot, ClockSnapshot.Clock
inline constexpr uint32_t kClockSnapshotClocks = 1;
inline constexpr uint32_t kClockSnapshotPrimaryTraceClock = 2;
inline constexpr uint32_t kClockClockId = 1;
inline constexpr uint32_t kClockTimestamp = 2;
inline constexpr uint32_t kBuiltinClockRealtime = 1;  // BuiltinClock
inline constexpr uint32_t kBuiltinClockMonotonic = 3;
inline constexpr uint32_t kBuiltinClockBoottime = 6;

// TrackDescriptor
inline constexpr uint32_t kTrackUuid = 1;
inline constexpr uint32_t kTrackName = 2;
inline constexpr uint32_t kTrackProcess = 3;
inline constexpr uint32_t kTrackThread = 4;
inline constexpr uint32_t kTrackParentUuid = 5;
inline constexpr uint32_t kTrackCounter = 8;
inline constexpr uint32_t kTrackChildOrdering = 11;
inline constexpr uint32_t kTrackSiblingOrderRank = 12;
inline constexpr uint32_t kTrackDescription = 14;
inline constexpr uint64_t kChildOrderingExplicit = 3;  // TrackDescriptor.ChildTracksOrdering

// ProcessDescriptor, ThreadDescriptor, CounterDescriptor
inline constexpr uint32_t kProcessPid = 1;
inline constexpr uint32_t kProcessName = 6;
inline constexpr uint32_t kThreadPid = 1;
inline constexpr uint32_t kThreadTid = 2;
inline constexpr uint32_t kThreadName = 5;
inline constexpr uint32_t kCounterUnit = 3;
inline constexpr uint32_t kCounterUnitName = 6;
inline constexpr uint64_t kCounterUnitCount = 2;  // CounterDescriptor.Unit

// TrackEvent
inline constexpr uint32_t kEventDebugAnnotations = 4;
inline constexpr uint32_t kEventType = 9;
inline constexpr uint32_t kEventTrackUuid = 11;
inline constexpr uint32_t kEventCategories = 22;
inline constexpr uint32_t kEventName = 23;
inline constexpr uint32_t kEventDoubleCounterValue = 44;
inline constexpr uint32_t kEventFlowIds = 47;
inline constexpr uint32_t kEventTerminatingFlowIds = 48;
inline constexpr uint32_t kEventCorrelationIdStr = 53;
inline constexpr uint64_t kTypeSliceBegin = 1;  // TrackEvent.Type
inline constexpr uint64_t kTypeSliceEnd = 2;
inline constexpr uint64_t kTypeInstant = 3;
inline constexpr uint64_t kTypeCounter = 4;

// DebugAnnotation
inline constexpr uint32_t kArgBoolValue = 2;
inline constexpr uint32_t kArgUintValue = 3;
inline constexpr uint32_t kArgIntValue = 4;
inline constexpr uint32_t kArgDoubleValue = 5;
inline constexpr uint32_t kArgStringValue = 6;
inline constexpr uint32_t kArgName = 10;

}  // namespace gpunoise::cupti::pf
