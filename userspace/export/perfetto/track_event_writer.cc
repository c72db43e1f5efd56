#include "export/perfetto/track_event_writer.h"

#include <cstdlib>

#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::perfetto {

uint64_t Fnv1a64(std::string_view data, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

TrackEventWriter::TrackEventWriter(uint32_t sequence_id, uint64_t salt, uint64_t default_track)
    : sequence_id_(sequence_id), salt_(salt), default_track_(default_track) {}

uint64_t TrackEventWriter::TrackUuid(std::string_view key) const {
  uint64_t uuid = Fnv1a64(key) ^ salt_;
  return uuid ? uuid : 1;
}

void TrackEventWriter::Begin(TracePacketBuilder* packet) {
  // Definitions still pending belong to a packet that was never finished:
  // dropping them would leave later iids unresolvable.
  if (!pending_.empty()) std::abort();
  packet->Clear();
}

void TrackEventWriter::Stamp(TracePacketBuilder* packet, uint64_t ts, bool needs_incremental_state) {
  Begin(packet);
  ProtoWriter w = packet->w();
  if (ts) w.Varint(pf::TracePacket::kTimestamp, ts);
  w.Varint(pf::TracePacket::kTrustedPacketSequenceId, sequence_id_);
  // One sequence_flags field: the trace processor keeps only the last.
  uint64_t flags = needs_incremental_state ? pf::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE : 0;
  if (first_packet_) {
    w.Bool(pf::TracePacket::kFirstPacketOnSequence, true);
    flags |= pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED;
    first_packet_ = false;
  }
  if (flags) w.Varint(pf::TracePacket::kSequenceFlags, flags);
  if (flags & pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED && default_track_) {
    // Defaults are incremental state: declared where the state starts.
    packet->Open(pf::TracePacket::kTracePacketDefaults);
    packet->Open(pf::TracePacketDefaults::kTrackEventDefaults);
    packet->w().Varint(pf::TrackEventDefaults::kTrackUuid, default_track_);
    packet->CloseAll();
  }
}

EventRef TrackEventWriter::Open(TracePacketBuilder* packet, uint64_t ts, uint64_t track, uint32_t type,
                                bool needs_incremental_state) {
  const bool on_default = default_track_ && track == default_track_;
  Stamp(packet, ts, needs_incremental_state || on_default);
  packet->Open(pf::TracePacket::kTrackEvent);
  ProtoWriter e = packet->w();
  e.Varint(pf::TrackEvent::kType, type);
  if (!on_default) e.Varint(pf::TrackEvent::kTrackUuid, track);
  return EventRef(packet);
}

uint64_t TrackEventWriter::Intern(InternTable table, std::string_view value) {
  auto& map = interned_[table];
  auto it = map.find(value);
  if (it != map.end()) return it->second;
  // iid 0 means "not set" to readers.
  uint64_t iid = map.size() + 1;
  it = map.emplace(std::string(value), iid).first;
  pending_.push_back({table, iid, it->first});
  return iid;
}

EventRef TrackEventWriter::FillInterned(TracePacketBuilder* packet, uint64_t ts, uint64_t track, uint32_t type,
                                        std::string_view name, std::string_view category) {
  EventRef event = Open(packet, ts, track, type, true);
  ProtoWriter e = packet->w();
  if (!name.empty()) e.Varint(pf::TrackEvent::kNameIid, Intern(kEventNames, name));
  if (!category.empty()) e.Varint(pf::TrackEvent::kCategoryIids, Intern(kCategories, category));
  return event;
}

EventRef TrackEventWriter::FillInternedSliceBegin(TracePacketBuilder* packet, uint64_t ts, uint64_t track,
                                                  std::string_view name, std::string_view category) {
  return FillInterned(packet, ts, track, pf::TrackEvent::TYPE_SLICE_BEGIN, name, category);
}

EventRef TrackEventWriter::FillInternedInstant(TracePacketBuilder* packet, uint64_t ts, uint64_t track,
                                               std::string_view name, std::string_view category) {
  return FillInterned(packet, ts, track, pf::TrackEvent::TYPE_INSTANT, name, category);
}

void TrackEventWriter::FinishInterned(TracePacketBuilder* packet) {
  if (pending_.empty()) return;
  packet->CloseAll();
  packet->Open(pf::TracePacket::kInternedData);
  static constexpr uint32_t kField[kInternTables] = {
      pf::InternedData::kEventNames, pf::InternedData::kEventCategories, pf::InternedData::kDebugAnnotationNames,
      pf::InternedData::kDebugAnnotationStringValues};
  for (const Definition& d : pending_) {
    // EventName, EventCategory, DebugAnnotationName and InternedString all
    // are {iid = 1, name or str = 2}.
    packet->Open(kField[d.table]);
    ProtoWriter w = packet->w();
    w.Varint(pf::EventName::kIid, d.iid);
    w.Bytes(pf::EventName::kName, d.value);
    packet->Close();
  }
  packet->Close();
  pending_.clear();
}

void TrackEventWriter::FillTrackDescriptor(TracePacketBuilder* packet, uint64_t uuid,
                                           std::string_view name, uint64_t parent_uuid,
                                           std::string_view description) {
  Stamp(packet, 0);
  packet->Open(pf::TracePacket::kTrackDescriptor);
  ProtoWriter d = packet->w();
  d.Varint(pf::TrackDescriptor::kUuid, uuid);
  if (parent_uuid) d.Varint(pf::TrackDescriptor::kParentUuid, parent_uuid);
  d.Bytes(pf::TrackDescriptor::kName, name);
  if (!description.empty()) d.Bytes(pf::TrackDescriptor::kDescription, description);
}

void TrackEventWriter::FillThreadTrackDescriptor(TracePacketBuilder* packet, uint64_t uuid, int32_t pid,
                                                 int32_t tid, std::string_view thread_name) {
  // Not Stamp: on this writer's sequence, the trace processor would take the
  // thread for the sequence's own (sequence_ids.h), and the sequence's first
  // packet must stay the one that clears its state.
  Begin(packet);
  packet->Open(pf::TracePacket::kTrackDescriptor);
  packet->w().Varint(pf::TrackDescriptor::kUuid, uuid);
  packet->Open(pf::TrackDescriptor::kThread);
  ProtoWriter t = packet->w();
  t.Int(pf::ThreadDescriptor::kPid, pid);
  t.Int(pf::ThreadDescriptor::kTid, tid);
  if (!thread_name.empty()) t.Bytes(pf::ThreadDescriptor::kThreadName, thread_name);
}

void TrackEventWriter::FillProcessTrackDescriptor(TracePacketBuilder* packet, uint64_t uuid, int32_t pid,
                                                  std::string_view process_name) {
  Stamp(packet, 0);
  packet->Open(pf::TracePacket::kTrackDescriptor);
  packet->w().Varint(pf::TrackDescriptor::kUuid, uuid);
  packet->Open(pf::TrackDescriptor::kProcess);
  ProtoWriter p = packet->w();
  p.Int(pf::ProcessDescriptor::kPid, pid);
  if (!process_name.empty()) p.Bytes(pf::ProcessDescriptor::kProcessName, process_name);
}

void TrackEventWriter::FillCounterTrackDescriptor(TracePacketBuilder* packet, uint64_t uuid,
                                                  std::string_view name, CounterUnit unit,
                                                  std::string_view unit_name,
                                                  uint64_t parent_uuid) {
  FillTrackDescriptor(packet, uuid, name, parent_uuid);
  packet->Open(pf::TrackDescriptor::kCounter);
  ProtoWriter c = packet->w();
  switch (unit) {
    case CounterUnit::kNone: break;
    case CounterUnit::kCount: c.Varint(pf::CounterDescriptor::kUnit, pf::CounterDescriptor::UNIT_COUNT); break;
    case CounterUnit::kBytes: c.Varint(pf::CounterDescriptor::kUnit, pf::CounterDescriptor::UNIT_SIZE_BYTES); break;
    case CounterUnit::kTimeNs: c.Varint(pf::CounterDescriptor::kUnit, pf::CounterDescriptor::UNIT_TIME_NS); break;
  }
  if (!unit_name.empty()) c.Bytes(pf::CounterDescriptor::kUnitName, unit_name);
}

namespace {
void NameEvent(TracePacketBuilder* packet, std::string_view name, std::string_view category) {
  ProtoWriter e = packet->w();
  if (!name.empty()) e.Bytes(pf::TrackEvent::kName, name);
  if (!category.empty()) e.Bytes(pf::TrackEvent::kCategories, category);
}
}  // namespace

EventRef TrackEventWriter::FillSliceBegin(TracePacketBuilder* packet, uint64_t ts, uint64_t track,
                                          std::string_view name, std::string_view category) {
  EventRef e = Open(packet, ts, track, pf::TrackEvent::TYPE_SLICE_BEGIN);
  NameEvent(packet, name, category);
  return e;
}

EventRef TrackEventWriter::FillSliceEnd(TracePacketBuilder* packet, uint64_t ts, uint64_t track) {
  return Open(packet, ts, track, pf::TrackEvent::TYPE_SLICE_END);
}

EventRef TrackEventWriter::FillInstant(TracePacketBuilder* packet, uint64_t ts, uint64_t track,
                                       std::string_view name, std::string_view category) {
  EventRef e = Open(packet, ts, track, pf::TrackEvent::TYPE_INSTANT);
  NameEvent(packet, name, category);
  return e;
}

void TrackEventWriter::FillCounter(TracePacketBuilder* packet, uint64_t ts, uint64_t track,
                                   double value) {
  Open(packet, ts, track, pf::TrackEvent::TYPE_COUNTER);
  packet->w().Double(pf::TrackEvent::kDoubleCounterValue, value);
}

namespace {
// One debug annotation: its name, then `write` puts the value in.
template <typename WriteValue>
void Arg(EventRef e, std::string_view name, WriteValue write) {
  TracePacketBuilder* packet = e.packet();
  ProtoWriter w = packet->In(pf::TracePacket::kTrackEvent);
  size_t token = w.BeginMessage(pf::TrackEvent::kDebugAnnotations);
  w.Bytes(pf::DebugAnnotation::kName, name);
  write(w);
  w.EndMessage(token);
}

// One debug annotation with an interned name and a varint value (an int64,
// a uint64 or an interned string's iid, by `value_field`).
void InternedVarintArg(EventRef e, uint64_t name_iid, uint32_t value_field, uint64_t value) {
  ProtoWriter w = e.packet()->In(pf::TracePacket::kTrackEvent);
  size_t token = w.BeginMessage(pf::TrackEvent::kDebugAnnotations);
  w.Varint(pf::DebugAnnotation::kNameIid, name_iid);
  w.Varint(value_field, value);
  w.EndMessage(token);
}
}  // namespace

void TrackEventWriter::AddInternedArg(EventRef e, std::string_view name, std::string_view value) {
  const uint64_t name_iid = Intern(kAnnotationNames, name);
  InternedVarintArg(e, name_iid, pf::DebugAnnotation::kStringValueIid, Intern(kAnnotationStrings, value));
}

void TrackEventWriter::AddInternedArg(EventRef e, std::string_view name, int64_t value) {
  InternedVarintArg(e, Intern(kAnnotationNames, name), pf::DebugAnnotation::kIntValue, static_cast<uint64_t>(value));
}

void TrackEventWriter::AddInternedArg(EventRef e, std::string_view name, uint64_t value) {
  InternedVarintArg(e, Intern(kAnnotationNames, name), pf::DebugAnnotation::kUintValue, value);
}

void AddArg(EventRef e, std::string_view name, std::string_view value) {
  Arg(e, name, [&](ProtoWriter& w) { w.Bytes(pf::DebugAnnotation::kStringValue, value); });
}
void AddArg(EventRef e, std::string_view name, const char* value) {
  AddArg(e, name, std::string_view(value));
}
void AddArg(EventRef e, std::string_view name, int64_t value) {
  Arg(e, name, [&](ProtoWriter& w) { w.Int(pf::DebugAnnotation::kIntValue, value); });
}
void AddArg(EventRef e, std::string_view name, uint64_t value) {
  Arg(e, name, [&](ProtoWriter& w) { w.Varint(pf::DebugAnnotation::kUintValue, value); });
}
void AddArg(EventRef e, std::string_view name, int32_t value) { AddArg(e, name, int64_t{value}); }
void AddArg(EventRef e, std::string_view name, uint32_t value) { AddArg(e, name, uint64_t{value}); }
void AddArg(EventRef e, std::string_view name, double value) {
  Arg(e, name, [&](ProtoWriter& w) { w.Double(pf::DebugAnnotation::kDoubleValue, value); });
}
void AddArg(EventRef e, std::string_view name, bool value) {
  Arg(e, name, [&](ProtoWriter& w) { w.Bool(pf::DebugAnnotation::kBoolValue, value); });
}

}  // namespace gpunoise::perfetto
