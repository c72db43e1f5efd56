#include "cupti/packet_builder.h"

#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::cupti {

PacketBuilder::PacketBuilder(uint32_t sequence_id, std::string* out)
    : sequence_id_(sequence_id), out_(out) {}

ProtoWriter PacketBuilder::BeginPacket(uint64_t ts, bool on_sequence) {
  scratch_.clear();
  ProtoWriter w(&scratch_);
  if (ts) w.Varint(pf::TracePacket::kTimestamp, ts);
  if (!on_sequence) return w;
  w.Varint(pf::TracePacket::kTrustedPacketSequenceId, sequence_id_);
  if (sequence_start_pending_) {
    w.Varint(pf::TracePacket::kSequenceFlags, pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    w.Bool(pf::TracePacket::kFirstPacketOnSequence, true);
    sequence_start_pending_ = false;
  }
  return w;
}

void PacketBuilder::EndPacket() { AppendFramedPacket(scratch_, out_); }

void PacketBuilder::ClockSnapshot(const ClockReadings& clocks) {
  ProtoWriter w = BeginPacket(clocks.boottime);
  size_t snapshot = w.BeginNested(pf::TracePacket::kClockSnapshot);
  auto add = [&](uint32_t id, uint64_t ts) {
    size_t clock = w.BeginNested(pf::ClockSnapshot::kClocks);
    w.Varint(pf::ClockSnapshot::Clock::kClockId, id);
    w.Varint(pf::ClockSnapshot::Clock::kTimestamp, ts);
    w.EndNested(clock);
  };
  add(pf::BUILTIN_CLOCK_BOOTTIME, clocks.boottime);
  add(pf::BUILTIN_CLOCK_MONOTONIC, clocks.monotonic);
  add(pf::BUILTIN_CLOCK_REALTIME, clocks.realtime);
  w.Varint(pf::ClockSnapshot::kPrimaryTraceClock, pf::BUILTIN_CLOCK_BOOTTIME);
  w.EndNested(snapshot);
  EndPacket();
}

void PacketBuilder::TrackDescriptor(const TrackSpec& t) {
  ProtoWriter w = BeginPacket(0, /*on_sequence=*/t.thread_tid == 0);
  size_t desc = w.BeginNested(pf::TracePacket::kTrackDescriptor);
  w.Varint(pf::TrackDescriptor::kUuid, t.uuid);
  if (t.parent_uuid) w.Varint(pf::TrackDescriptor::kParentUuid, t.parent_uuid);
  if (!t.name.empty()) w.Bytes(pf::TrackDescriptor::kName, t.name);
  if (!t.description.empty()) w.Bytes(pf::TrackDescriptor::kDescription, t.description);
  if (t.process_pid) {
    size_t p = w.BeginNested(pf::TrackDescriptor::kProcess);
    w.Int(pf::ProcessDescriptor::kPid, t.process_pid);
    if (!t.process_name.empty()) w.Bytes(pf::ProcessDescriptor::kProcessName, t.process_name);
    w.EndNested(p);
  }
  if (t.thread_tid) {
    size_t th = w.BeginNested(pf::TrackDescriptor::kThread);
    w.Int(pf::ThreadDescriptor::kPid, t.thread_pid);
    w.Int(pf::ThreadDescriptor::kTid, t.thread_tid);
    w.EndNested(th);
  }
  if (t.counter) {
    size_t c = w.BeginNested(pf::TrackDescriptor::kCounter);
    if (t.counter_unit_name.empty()) {
      w.Varint(pf::CounterDescriptor::kUnit, pf::CounterDescriptor::UNIT_COUNT);
    } else {
      w.Bytes(pf::CounterDescriptor::kUnitName, t.counter_unit_name);
    }
    w.EndNested(c);
  }
  if (t.explicit_child_order) w.Varint(pf::TrackDescriptor::kChildOrdering, pf::TrackDescriptor::EXPLICIT);
  if (t.sibling_order_rank) w.Int(pf::TrackDescriptor::kSiblingOrderRank, t.sibling_order_rank);
  w.EndNested(desc);
  EndPacket();
}

EventPacket PacketBuilder::BeginEvent(uint64_t ts, uint64_t track, uint64_t type,
                                      std::string_view name, std::string_view category) {
  ProtoWriter w = BeginPacket(ts);
  size_t event = w.BeginNested(pf::TracePacket::kTrackEvent);
  w.Varint(pf::TrackEvent::kType, type);
  w.Varint(pf::TrackEvent::kTrackUuid, track);
  if (!name.empty()) w.Bytes(pf::TrackEvent::kName, name);
  if (!category.empty()) w.Bytes(pf::TrackEvent::kCategories, category);
  return EventPacket(this, event);
}

EventPacket PacketBuilder::SliceBegin(uint64_t ts, uint64_t track, std::string_view name,
                                      std::string_view category) {
  return BeginEvent(ts, track, pf::TrackEvent::TYPE_SLICE_BEGIN, name, category);
}

void PacketBuilder::SliceEnd(uint64_t ts, uint64_t track) {
  EventPacket e = BeginEvent(ts, track, pf::TrackEvent::TYPE_SLICE_END, {}, {});
}

EventPacket PacketBuilder::Instant(uint64_t ts, uint64_t track, std::string_view name,
                                   std::string_view category) {
  return BeginEvent(ts, track, pf::TrackEvent::TYPE_INSTANT, name, category);
}

void PacketBuilder::Counter(uint64_t ts, uint64_t track, double value) {
  EventPacket e = BeginEvent(ts, track, pf::TrackEvent::TYPE_COUNTER, {}, {});
  ProtoWriter(&scratch_).Double(pf::TrackEvent::kDoubleCounterValue, value);
}

EventPacket::EventPacket(PacketBuilder* builder, size_t event_token)
    : builder_(builder), event_token_(event_token) {}

EventPacket::~EventPacket() {
  ProtoWriter(&builder_->scratch_).EndNested(event_token_);
  builder_->EndPacket();
}

namespace {
size_t BeginArg(ProtoWriter& w, std::string_view name) {
  size_t token = w.BeginNested(pf::TrackEvent::kDebugAnnotations);
  w.Bytes(pf::DebugAnnotation::kName, name);
  return token;
}
}  // namespace

EventPacket& EventPacket::Arg(std::string_view name, std::string_view value) {
  ProtoWriter w(&builder_->scratch_);
  size_t t = BeginArg(w, name);
  w.Bytes(pf::DebugAnnotation::kStringValue, value);
  w.EndNested(t);
  return *this;
}

EventPacket& EventPacket::Arg(std::string_view name, uint64_t value) {
  ProtoWriter w(&builder_->scratch_);
  size_t t = BeginArg(w, name);
  w.Varint(pf::DebugAnnotation::kUintValue, value);
  w.EndNested(t);
  return *this;
}

EventPacket& EventPacket::Arg(std::string_view name, int64_t value) {
  ProtoWriter w(&builder_->scratch_);
  size_t t = BeginArg(w, name);
  w.Int(pf::DebugAnnotation::kIntValue, value);
  w.EndNested(t);
  return *this;
}

EventPacket& EventPacket::Arg(std::string_view name, double value) {
  ProtoWriter w(&builder_->scratch_);
  size_t t = BeginArg(w, name);
  w.Double(pf::DebugAnnotation::kDoubleValue, value);
  w.EndNested(t);
  return *this;
}

EventPacket& EventPacket::Arg(std::string_view name, bool value) {
  ProtoWriter w(&builder_->scratch_);
  size_t t = BeginArg(w, name);
  w.Bool(pf::DebugAnnotation::kBoolValue, value);
  w.EndNested(t);
  return *this;
}

EventPacket& EventPacket::Flow(uint64_t flow_id) {
  ProtoWriter(&builder_->scratch_).Fixed64(pf::TrackEvent::kFlowIds, flow_id);
  return *this;
}

EventPacket& EventPacket::TerminatingFlow(uint64_t flow_id) {
  ProtoWriter(&builder_->scratch_).Fixed64(pf::TrackEvent::kTerminatingFlowIds, flow_id);
  return *this;
}

EventPacket& EventPacket::Correlation(std::string_view id) {
  ProtoWriter(&builder_->scratch_).Bytes(pf::TrackEvent::kCorrelationIdStr, id);
  return *this;
}

}  // namespace gpunoise::cupti
