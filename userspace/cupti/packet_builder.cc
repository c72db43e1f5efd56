#include "cupti/packet_builder.h"

#include "cupti/perfetto_fields.h"

namespace gpunoise::cupti {

PacketBuilder::PacketBuilder(uint32_t sequence_id, std::string* out)
    : sequence_id_(sequence_id), out_(out) {}

ProtoWriter PacketBuilder::BeginPacket(uint64_t ts) {
  scratch_.clear();
  ProtoWriter w(&scratch_);
  if (ts) w.Varint(pf::kPacketTimestamp, ts);
  w.Varint(pf::kPacketTrustedPacketSequenceId, sequence_id_);
  if (sequence_start_pending_) {
    w.Varint(pf::kPacketSequenceFlags, pf::kSeqIncrementalStateCleared);
    w.Bool(pf::kPacketFirstPacketOnSequence, true);
    sequence_start_pending_ = false;
  }
  return w;
}

void PacketBuilder::EndPacket() { AppendFramedPacket(scratch_, out_); }

void PacketBuilder::ClockSnapshot(const ClockReadings& clocks) {
  ProtoWriter w = BeginPacket(clocks.boottime);
  size_t snapshot = w.BeginNested(pf::kPacketClockSnapshot);
  auto add = [&](uint32_t id, uint64_t ts) {
    size_t clock = w.BeginNested(pf::kClockSnapshotClocks);
    w.Varint(pf::kClockClockId, id);
    w.Varint(pf::kClockTimestamp, ts);
    w.EndNested(clock);
  };
  add(pf::kBuiltinClockBoottime, clocks.boottime);
  add(pf::kBuiltinClockMonotonic, clocks.monotonic);
  add(pf::kBuiltinClockRealtime, clocks.realtime);
  w.Varint(pf::kClockSnapshotPrimaryTraceClock, pf::kBuiltinClockBoottime);
  w.EndNested(snapshot);
  EndPacket();
}

void PacketBuilder::TrackDescriptor(const TrackSpec& t) {
  ProtoWriter w = BeginPacket(0);
  size_t desc = w.BeginNested(pf::kPacketTrackDescriptor);
  w.Varint(pf::kTrackUuid, t.uuid);
  if (t.parent_uuid) w.Varint(pf::kTrackParentUuid, t.parent_uuid);
  if (!t.name.empty()) w.Bytes(pf::kTrackName, t.name);
  if (!t.description.empty()) w.Bytes(pf::kTrackDescription, t.description);
  if (t.process_pid) {
    size_t p = w.BeginNested(pf::kTrackProcess);
    w.Int(pf::kProcessPid, t.process_pid);
    if (!t.process_name.empty()) w.Bytes(pf::kProcessName, t.process_name);
    w.EndNested(p);
  }
  if (t.thread_tid) {
    size_t th = w.BeginNested(pf::kTrackThread);
    w.Int(pf::kThreadPid, t.thread_pid);
    w.Int(pf::kThreadTid, t.thread_tid);
    w.EndNested(th);
  }
  if (t.counter) {
    size_t c = w.BeginNested(pf::kTrackCounter);
    if (t.counter_unit_name.empty()) {
      w.Varint(pf::kCounterUnit, pf::kCounterUnitCount);
    } else {
      w.Bytes(pf::kCounterUnitName, t.counter_unit_name);
    }
    w.EndNested(c);
  }
  if (t.explicit_child_order) w.Varint(pf::kTrackChildOrdering, pf::kChildOrderingExplicit);
  if (t.sibling_order_rank) w.Int(pf::kTrackSiblingOrderRank, t.sibling_order_rank);
  w.EndNested(desc);
  EndPacket();
}

EventPacket PacketBuilder::BeginEvent(uint64_t ts, uint64_t track, uint64_t type,
                                      std::string_view name, std::string_view category) {
  ProtoWriter w = BeginPacket(ts);
  size_t event = w.BeginNested(pf::kPacketTrackEvent);
  w.Varint(pf::kEventType, type);
  w.Varint(pf::kEventTrackUuid, track);
  if (!name.empty()) w.Bytes(pf::kEventName, name);
  if (!category.empty()) w.Bytes(pf::kEventCategories, category);
  return EventPacket(this, event);
}

EventPacket PacketBuilder::SliceBegin(uint64_t ts, uint64_t track, std::string_view name,
                                      std::string_view category) {
  return BeginEvent(ts, track, pf::kTypeSliceBegin, name, category);
}

void PacketBuilder::SliceEnd(uint64_t ts, uint64_t track) {
  EventPacket e = BeginEvent(ts, track, pf::kTypeSliceEnd, {}, {});
}

EventPacket PacketBuilder::Instant(uint64_t ts, uint64_t track, std::string_view name,
                                   std::string_view category) {
  return BeginEvent(ts, track, pf::kTypeInstant, name, category);
}

void PacketBuilder::Counter(uint64_t ts, uint64_t track, double value) {
  EventPacket e = BeginEvent(ts, track, pf::kTypeCounter, {}, {});
  ProtoWriter(&scratch_).Double(pf::kEventDoubleCounterValue, value);
}

EventPacket::EventPacket(PacketBuilder* builder, size_t event_token)
    : builder_(builder), event_token_(event_token) {}

EventPacket::~EventPacket() {
  ProtoWriter(&builder_->scratch_).EndNested(event_token_);
  builder_->EndPacket();
}

namespace {
size_t BeginArg(ProtoWriter& w, std::string_view name) {
  size_t token = w.BeginNested(pf::kEventDebugAnnotations);
  w.Bytes(pf::kArgName, name);
  return token;
}
}  // namespace

EventPacket& EventPacket::Arg(std::string_view name, std::string_view value) {
  ProtoWriter w(&builder_->scratch_);
  size_t t = BeginArg(w, name);
  w.Bytes(pf::kArgStringValue, value);
  w.EndNested(t);
  return *this;
}

EventPacket& EventPacket::Arg(std::string_view name, uint64_t value) {
  ProtoWriter w(&builder_->scratch_);
  size_t t = BeginArg(w, name);
  w.Varint(pf::kArgUintValue, value);
  w.EndNested(t);
  return *this;
}

EventPacket& EventPacket::Arg(std::string_view name, int64_t value) {
  ProtoWriter w(&builder_->scratch_);
  size_t t = BeginArg(w, name);
  w.Int(pf::kArgIntValue, value);
  w.EndNested(t);
  return *this;
}

EventPacket& EventPacket::Arg(std::string_view name, double value) {
  ProtoWriter w(&builder_->scratch_);
  size_t t = BeginArg(w, name);
  w.Double(pf::kArgDoubleValue, value);
  w.EndNested(t);
  return *this;
}

EventPacket& EventPacket::Arg(std::string_view name, bool value) {
  ProtoWriter w(&builder_->scratch_);
  size_t t = BeginArg(w, name);
  w.Bool(pf::kArgBoolValue, value);
  w.EndNested(t);
  return *this;
}

EventPacket& EventPacket::Flow(uint64_t flow_id) {
  ProtoWriter(&builder_->scratch_).Fixed64(pf::kEventFlowIds, flow_id);
  return *this;
}

EventPacket& EventPacket::TerminatingFlow(uint64_t flow_id) {
  ProtoWriter(&builder_->scratch_).Fixed64(pf::kEventTerminatingFlowIds, flow_id);
  return *this;
}

EventPacket& EventPacket::Correlation(std::string_view id) {
  ProtoWriter(&builder_->scratch_).Bytes(pf::kEventCorrelationIdStr, id);
  return *this;
}

}  // namespace gpunoise::cupti
