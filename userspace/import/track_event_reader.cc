#include "import/track_event_reader.h"

#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::import {
namespace {


// Interned entries (EventName, EventCategory, DebugAnnotationName,
// InternedString) share the layout {iid = 1, name/str = 2}.
bool ReadInterned(const ProtoField& field, std::unordered_map<uint64_t, std::string>* out) {
  uint64_t iid = 0;
  std::string_view name;
  ProtoReader r(field);
  ProtoField e;
  while (r.Next(&e)) {
    if (e.id == pf::EventName::kIid) iid = e.int_value;
    if (e.id == pf::EventName::kName && e.type == WireType::kLengthDelimited) name = e.as_string();
  }
  if (r.error()) return false;
  (*out)[iid] = std::string(name);
  return true;
}

std::string_view Lookup(const std::unordered_map<uint64_t, std::string>& map, uint64_t iid) {
  auto it = map.find(iid);
  return it == map.end() ? std::string_view() : std::string_view(it->second);
}

}  // namespace

bool TrackEventReader::UpdateSequence(const PacketContext& ctx, PacketError* error) {
  SequenceState& seq = sequences_[ctx.sequence_id];
  if (ctx.incremental_state_cleared) {
    seq.event_names.clear();
    seq.categories.clear();
    seq.annotation_names.clear();
    seq.annotation_strings.clear();
  }
  if (ctx.defaults) {
    ProtoReader r(*ctx.defaults);
    ProtoField d;
    while (r.Next(&d)) {
      if (d.id != pf::TracePacketDefaults::kTrackEventDefaults) continue;
      ProtoReader tr(d);
      ProtoField t;
      while (tr.Next(&t))
        if (t.id == pf::TrackEventDefaults::kTrackUuid) seq.default_track = t.int_value;
    }
    if (r.error()) {
      *error = {0, "TracePacketDefaults is malformed"};
      return false;
    }
  }
  if (ctx.interned_data) {
    ProtoReader r(*ctx.interned_data);
    ProtoField d;
    bool ok = true;
    while (r.Next(&d)) {
      if (d.type != WireType::kLengthDelimited) continue;
      switch (d.id) {
        case pf::InternedData::kEventNames: ok &= ReadInterned(d, &seq.event_names); break;
        case pf::InternedData::kEventCategories: ok &= ReadInterned(d, &seq.categories); break;
        case pf::InternedData::kDebugAnnotationNames: ok &= ReadInterned(d, &seq.annotation_names); break;
        case pf::InternedData::kDebugAnnotationStringValues:
          ok &= ReadInterned(d, &seq.annotation_strings);
          break;
        default: break;
      }
    }
    if (r.error() || !ok) {
      *error = {0, "InternedData is malformed"};
      return false;
    }
  }
  return true;
}

bool TrackEventReader::DecodeDescriptor(const ProtoField& field, PacketError* error) {
  model::TrackInfo track;
  ProtoReader r(field);
  ProtoField d;
  while (r.Next(&d)) {
    switch (d.id) {
      case pf::TrackDescriptor::kUuid: track.uuid = d.int_value; break;
      case pf::TrackDescriptor::kParentUuid: track.parent_uuid = d.int_value; break;
      case pf::TrackDescriptor::kName:
      case pf::TrackDescriptor::kStaticName: track.name = std::string(d.as_string()); break;
      case pf::TrackDescriptor::kCounter: track.is_counter = true; break;
      case pf::TrackDescriptor::kProcess: {
        ProtoReader pr(d);
        ProtoField p;
        while (pr.Next(&p)) {
          if (p.id == pf::ProcessDescriptor::kPid) track.pid = p.as_int32();
          if (p.id == pf::ProcessDescriptor::kProcessName && track.name.empty())
            track.name = std::string(p.as_string());
        }
        break;
      }
      case pf::TrackDescriptor::kThread: {
        ProtoReader tr(d);
        ProtoField t;
        while (tr.Next(&t)) {
          if (t.id == pf::ThreadDescriptor::kPid) track.pid = t.as_int32();
          if (t.id == pf::ThreadDescriptor::kTid) track.tid = t.as_int32();
          if (t.id == pf::ThreadDescriptor::kThreadName && track.name.empty())
            track.name = std::string(t.as_string());
        }
        break;
      }
      default: break;
    }
  }
  if (r.error()) {
    *error = {r.error_offset(), "TrackDescriptor is malformed"};
    return false;
  }
  sink_.OnTrack(track);
  return true;
}

bool TrackEventReader::DecodeAnnotation(const ProtoField& field, SequenceState& seq,
                                        model::TrackArg* arg, PacketError* error,
                                        const uint8_t* base) {
  ProtoReader r(field);
  ProtoField a;
  while (r.Next(&a)) {
    switch (a.id) {
      case pf::DebugAnnotation::kName: arg->name = std::string(a.as_string()); break;
      case pf::DebugAnnotation::kNameIid: arg->name = std::string(Lookup(seq.annotation_names, a.int_value)); break;
      case pf::DebugAnnotation::kBoolValue:
        arg->type = model::TrackArg::Type::kBool;
        arg->int_value = a.as_bool();
        break;
      case pf::DebugAnnotation::kUintValue:
      case pf::DebugAnnotation::kPointerValue:
        arg->type = model::TrackArg::Type::kUint;
        arg->uint_value = a.int_value;
        break;
      case pf::DebugAnnotation::kIntValue:
        arg->type = model::TrackArg::Type::kInt;
        arg->int_value = a.as_int64();
        break;
      case pf::DebugAnnotation::kDoubleValue:
        arg->type = model::TrackArg::Type::kDouble;
        arg->double_value = a.as_double();
        break;
      case pf::DebugAnnotation::kStringValue:
        arg->type = model::TrackArg::Type::kString;
        arg->string_value = std::string(a.as_string());
        break;
      case pf::DebugAnnotation::kStringValueIid:
        arg->type = model::TrackArg::Type::kString;
        arg->string_value = std::string(Lookup(seq.annotation_strings, a.int_value));
        break;
      default: break;  // nested values: not used by the report
    }
  }
  if (r.error()) {
    *error = {static_cast<size_t>(field.data - base) + r.error_offset(), "DebugAnnotation is malformed"};
    return false;
  }
  return true;
}

bool TrackEventReader::DecodeEvent(const PacketContext& ctx, const ProtoField& field,
                                   PacketError* error) {
  SequenceState& seq = sequences_[ctx.sequence_id];
  model::TrackEventRecord& e = record_;
  e.ts = ctx.timestamp;
  e.sequence_id = ctx.sequence_id;
  e.track_uuid = seq.default_track;
  e.type = model::TrackEventType::kInstant;
  e.name = {};
  e.category = {};
  e.counter_value = 0;
  e.correlation_id = 0;
  e.flow_ids.clear();
  e.terminating_flow_ids.clear();
  e.args.clear();
  ProtoReader r(field);
  ProtoField t;
  while (r.Next(&t)) {
    switch (t.id) {
      case pf::TrackEvent::kType:
        switch (t.int_value) {
          case pf::TrackEvent::TYPE_SLICE_BEGIN: e.type = model::TrackEventType::kSliceBegin; break;
          case pf::TrackEvent::TYPE_SLICE_END: e.type = model::TrackEventType::kSliceEnd; break;
          case pf::TrackEvent::TYPE_COUNTER: e.type = model::TrackEventType::kCounter; break;
          default: e.type = model::TrackEventType::kInstant; break;
        }
        break;
      case pf::TrackEvent::kTrackUuid: e.track_uuid = t.int_value; break;
      case pf::TrackEvent::kName: e.name = t.as_string(); break;
      case pf::TrackEvent::kNameIid: e.name = Lookup(seq.event_names, t.int_value); break;
      case pf::TrackEvent::kCategories:
        if (e.category.empty()) e.category = t.as_string();
        break;
      case pf::TrackEvent::kCategoryIids:
        if (e.category.empty() && t.type == WireType::kVarint)
          e.category = Lookup(seq.categories, t.int_value);
        break;
      case pf::TrackEvent::kCounterValue: e.counter_value = static_cast<double>(t.as_int64()); break;
      case pf::TrackEvent::kDoubleCounterValue: e.counter_value = t.as_double(); break;
      case pf::TrackEvent::kCorrelationId: e.correlation_id = t.int_value; break;
      case pf::TrackEvent::kFlowIds:
      case pf::TrackEvent::kTerminatingFlowIds: {
        auto& out = t.id == pf::TrackEvent::kFlowIds ? e.flow_ids : e.terminating_flow_ids;
        if (t.type == WireType::kFixed64) {
          out.push_back(t.int_value);
        } else if (t.type == WireType::kLengthDelimited) {  // packed fixed64
          for (size_t i = 0; i + 8 <= t.size; i += 8) {
            uint64_t v;
            std::memcpy(&v, t.data + i, 8);
            out.push_back(v);
          }
        }
        break;
      }
      case pf::TrackEvent::kDebugAnnotations: {
        model::TrackArg arg;
        if (!DecodeAnnotation(t, seq, &arg, error, field.data)) return false;
        e.args.push_back(std::move(arg));
        break;
      }
      default: break;
    }
  }
  if (r.error()) {
    *error = {r.error_offset(), "TrackEvent is malformed"};
    return false;
  }
  ++events_;
  sink_.OnTrackEvent(e);
  return true;
}

}  // namespace gpunoise::import
