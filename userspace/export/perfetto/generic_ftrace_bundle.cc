#include "export/perfetto/generic_ftrace_bundle.h"

#include "common/proto_wire.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {

void EncodeGenericFtraceBundle(uint32_t cpu, std::span<const GenericFtraceRecord> records,
                               std::string* packet) {
  ProtoWriter w(packet);
  size_t bundle = w.BeginNested(TracePacket::kFtraceEventsFieldNumber);
  w.Varint(FtraceEventBundle::kCpuFieldNumber, cpu);
  for (const GenericFtraceRecord& r : records) {
    size_t event = w.BeginMessage(FtraceEventBundle::kEventFieldNumber);
    w.Varint(FtraceEvent::kTimestampFieldNumber, r.ts);
    w.Varint(FtraceEvent::kPidFieldNumber, static_cast<uint32_t>(r.pid));
    if (r.common_flags) w.Varint(FtraceEvent::kCommonFlagsFieldNumber, r.common_flags);
    size_t generic = w.BeginMessage(FtraceEvent::kGenericFieldNumber);
    w.Bytes(GenericFtraceEvent::kEventNameFieldNumber, r.event_name);
    for (const GenericFtraceField& f : r.fields) {
      size_t field = w.BeginMessage(GenericFtraceEvent::kFieldFieldNumber);
      w.Bytes(GenericFtraceEvent_Field::kNameFieldNumber, f.name);
      if (f.is_string) w.Bytes(GenericFtraceEvent_Field::kStrValueFieldNumber, f.text);
      else w.Int(GenericFtraceEvent_Field::kIntValueFieldNumber, f.value);
      w.EndMessage(field);
    }
    w.EndMessage(generic);
    w.EndMessage(event);
  }
  w.EndNested(bundle);
}

}  // namespace gpunoise::perfetto
