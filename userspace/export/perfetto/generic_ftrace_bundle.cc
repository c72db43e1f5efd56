#include "export/perfetto/generic_ftrace_bundle.h"

#include "common/proto_wire.h"
#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::perfetto {

void EncodeGenericFtraceBundle(uint32_t cpu, std::span<const GenericFtraceRecord> records,
                               std::string* packet) {
  ProtoWriter w(packet);
  size_t bundle = w.BeginNested(pf::TracePacket::kFtraceEvents);
  w.Varint(pf::FtraceEventBundle::kCpu, cpu);
  for (const GenericFtraceRecord& r : records) {
    size_t event = w.BeginMessage(pf::FtraceEventBundle::kEvent);
    w.Varint(pf::FtraceEvent::kTimestamp, r.ts);
    w.Varint(pf::FtraceEvent::kPid, static_cast<uint32_t>(r.pid));
    if (r.common_flags) w.Varint(pf::FtraceEvent::kCommonFlags, r.common_flags);
    size_t generic = w.BeginMessage(pf::FtraceEvent::kGeneric);
    w.Bytes(pf::GenericFtraceEvent::kEventName, r.event_name);
    for (const GenericFtraceField& f : r.fields) {
      size_t field = w.BeginMessage(pf::GenericFtraceEvent::kField);
      w.Bytes(pf::GenericFtraceEvent::Field::kName, f.name);
      if (f.is_string) w.Bytes(pf::GenericFtraceEvent::Field::kStrValue, f.text);
      else w.Int(pf::GenericFtraceEvent::Field::kIntValue, f.value);
      w.EndMessage(field);
    }
    w.EndMessage(generic);
    w.EndMessage(event);
  }
  w.EndNested(bundle);
}

}  // namespace gpunoise::perfetto
