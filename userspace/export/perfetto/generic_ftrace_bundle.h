// Encodes ftrace events that have no message of their own in Perfetto's
// schema (workqueue, mce, NIC-driver and other tracepoints read from a raw
// ring buffer) as one FtraceEventBundle of GenericFtraceEvent, fields by
// the names the tracepoint's format gives them. The trace processor keeps
// them in its ftrace_event table with their fields as args.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace gpunoise::perfetto {

struct GenericFtraceField {
  std::string_view name;
  bool is_string = false;
  int64_t value = 0;
  std::string_view text;
};

struct GenericFtraceRecord {
  uint64_t ts = 0;
  int32_t pid = 0;
  uint16_t common_flags = 0;
  std::string_view event_name;
  std::span<const GenericFtraceField> fields;
};

// Appends one serialized TracePacket holding the bundle to `packet`.
void EncodeGenericFtraceBundle(uint32_t cpu, std::span<const GenericFtraceRecord> records,
                               std::string* packet);

}  // namespace gpunoise::perfetto
