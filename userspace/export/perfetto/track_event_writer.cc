#include "export/perfetto/track_event_writer.h"

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {

uint64_t Fnv1a64(std::string_view data, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

TrackEventWriter::TrackEventWriter(uint32_t sequence_id, uint64_t salt)
    : sequence_id_(sequence_id), salt_(salt) {}

uint64_t TrackEventWriter::TrackUuid(std::string_view key) const {
  uint64_t uuid = Fnv1a64(key) ^ salt_;
  return uuid ? uuid : 1;
}

void TrackEventWriter::Stamp(TracePacket* packet, uint64_t ts) {
  packet->Clear();
  if (ts) packet->set_timestamp(ts);
  packet->set_trusted_packet_sequence_id(sequence_id_);
  if (first_packet_) {
    packet->set_first_packet_on_sequence(true);
    packet->set_sequence_flags(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    first_packet_ = false;
  }
}

void TrackEventWriter::FillTrackDescriptor(TracePacket* packet, uint64_t uuid,
                                           std::string_view name, uint64_t parent_uuid,
                                           std::string_view description) {
  Stamp(packet, 0);
  auto* d = packet->mutable_track_descriptor();
  d->set_uuid(uuid);
  if (parent_uuid) d->set_parent_uuid(parent_uuid);
  d->set_name(name.data(), name.size());
  if (!description.empty()) d->set_description(description.data(), description.size());
}

void TrackEventWriter::FillThreadTrackDescriptor(TracePacket* packet, uint64_t uuid, int32_t pid,
                                                 int32_t tid, std::string_view thread_name) {
  Stamp(packet, 0);
  auto* d = packet->mutable_track_descriptor();
  d->set_uuid(uuid);
  auto* t = d->mutable_thread();
  t->set_pid(pid);
  t->set_tid(tid);
  if (!thread_name.empty()) t->set_thread_name(thread_name.data(), thread_name.size());
}

void TrackEventWriter::FillProcessTrackDescriptor(TracePacket* packet, uint64_t uuid, int32_t pid,
                                                  std::string_view process_name) {
  Stamp(packet, 0);
  auto* d = packet->mutable_track_descriptor();
  d->set_uuid(uuid);
  auto* p = d->mutable_process();
  p->set_pid(pid);
  if (!process_name.empty()) p->set_process_name(process_name.data(), process_name.size());
}

void TrackEventWriter::FillCounterTrackDescriptor(TracePacket* packet, uint64_t uuid,
                                                  std::string_view name, CounterUnit unit,
                                                  std::string_view unit_name,
                                                  uint64_t parent_uuid) {
  FillTrackDescriptor(packet, uuid, name, parent_uuid);
  auto* c = packet->mutable_track_descriptor()->mutable_counter();
  switch (unit) {
    case CounterUnit::kNone: break;
    case CounterUnit::kCount: c->set_unit(CounterDescriptor::UNIT_COUNT); break;
    case CounterUnit::kBytes: c->set_unit(CounterDescriptor::UNIT_SIZE_BYTES); break;
    case CounterUnit::kTimeNs: c->set_unit(CounterDescriptor::UNIT_TIME_NS); break;
  }
  if (!unit_name.empty()) c->set_unit_name(unit_name.data(), unit_name.size());
}

namespace {
TrackEvent* NewEvent(TracePacket* packet, uint64_t track, TrackEvent::Type type,
                     std::string_view name, std::string_view category) {
  auto* e = packet->mutable_track_event();
  e->set_type(type);
  e->set_track_uuid(track);
  if (!name.empty()) e->set_name(name.data(), name.size());
  if (!category.empty()) e->add_categories(category.data(), category.size());
  return e;
}
}  // namespace

TrackEvent* TrackEventWriter::FillSliceBegin(TracePacket* packet, uint64_t ts, uint64_t track,
                                             std::string_view name, std::string_view category) {
  Stamp(packet, ts);
  return NewEvent(packet, track, TrackEvent::TYPE_SLICE_BEGIN, name, category);
}

TrackEvent* TrackEventWriter::FillSliceEnd(TracePacket* packet, uint64_t ts, uint64_t track) {
  Stamp(packet, ts);
  return NewEvent(packet, track, TrackEvent::TYPE_SLICE_END, {}, {});
}

TrackEvent* TrackEventWriter::FillInstant(TracePacket* packet, uint64_t ts, uint64_t track,
                                          std::string_view name, std::string_view category) {
  Stamp(packet, ts);
  return NewEvent(packet, track, TrackEvent::TYPE_INSTANT, name, category);
}

void TrackEventWriter::FillCounter(TracePacket* packet, uint64_t ts, uint64_t track,
                                   double value) {
  Stamp(packet, ts);
  auto* e = NewEvent(packet, track, TrackEvent::TYPE_COUNTER, {}, {});
  e->set_double_counter_value(value);
}

namespace {
DebugAnnotation* NewArg(TrackEvent* event, std::string_view name) {
  auto* a = event->add_debug_annotations();
  a->set_name(name.data(), name.size());
  return a;
}
}  // namespace

void AddArg(TrackEvent* e, std::string_view name, std::string_view value) {
  NewArg(e, name)->set_string_value(value.data(), value.size());
}
void AddArg(TrackEvent* e, std::string_view name, const char* value) {
  AddArg(e, name, std::string_view(value));
}
void AddArg(TrackEvent* e, std::string_view name, int64_t value) {
  NewArg(e, name)->set_int_value(value);
}
void AddArg(TrackEvent* e, std::string_view name, uint64_t value) {
  NewArg(e, name)->set_uint_value(value);
}
void AddArg(TrackEvent* e, std::string_view name, int32_t value) {
  NewArg(e, name)->set_int_value(value);
}
void AddArg(TrackEvent* e, std::string_view name, uint32_t value) {
  NewArg(e, name)->set_uint_value(value);
}
void AddArg(TrackEvent* e, std::string_view name, double value) {
  NewArg(e, name)->set_double_value(value);
}
void AddArg(TrackEvent* e, std::string_view name, bool value) {
  NewArg(e, name)->set_bool_value(value);
}

}  // namespace gpunoise::perfetto
