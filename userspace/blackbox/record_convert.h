// Turns one decoded ring-buffer record into the event model (the events
// `record` also writes, so the trace gets the same native ftrace messages),
// or, for tracepoints the model has no type for (workqueue, mce, printk,
// NIC drivers), into a generic record of its fields by their format names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "blackbox/event_formats.h"
#include "model/events.h"

namespace gpunoise::blackbox {

struct GenericField {
  std::string name;
  bool is_string = false;
  int64_t value = 0;
  std::string text;
};

struct GenericRecord {
  uint64_t ts = 0;
  uint32_t cpu = 0;
  int32_t tid = 0;
  uint16_t common_flags = 0;
  std::string event;  // the tracepoint's name ("workqueue_execute_start")
  std::string group;  // its group ("workqueue")
  std::vector<GenericField> fields;
};

using Converted = std::variant<std::monostate, model::Event, GenericRecord>;

// `irq_name` (may be null) receives irq_handler_entry's name for the irq
// table the trace writer keeps. ftrace:print records (markers) come back as
// GenericRecord with one string field "buf".
Converted ConvertRecord(const EventFormat& format, uint64_t ts, uint32_t cpu,
                        std::span<const uint8_t> payload,
                        std::string* irq_name = nullptr);

}  // namespace gpunoise::blackbox
