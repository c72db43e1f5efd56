// The events a ring buffer's records may carry, by the id in their
// common_type, with the layouts from tracefs `format` files; and typed reads
// of one record's fields by those layouts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collect/tracefs_format.h"
#include "common/result.h"

namespace gpunoise::blackbox {

struct EventFormat {
  std::string group;  // "sched"
  std::string name;   // "sched_switch"
  collect::TraceFormat format;
  std::string full_name() const { return group + "/" + name; }
};

// A short fingerprint of a layout (field names, offsets, sizes, signedness):
// two formats with the same fingerprint decode the same bytes the same way.
std::string LayoutFingerprint(const collect::TraceFormat& format);

class EventTable {
 public:
  void Add(EventFormat format);
  const EventFormat* Find(uint32_t id) const;
  const EventFormat* FindByName(std::string_view group, std::string_view name) const;
  const std::map<uint32_t, EventFormat>& all() const { return by_id_; }
  size_t size() const { return by_id_.size(); }

 private:
  std::map<uint32_t, EventFormat> by_id_;
};

// Reads events/GROUP/EVENT/format under `events_dir` for each "group/event"
// in `names`; a name without a format file goes to *missing.
EventTable LoadEventTable(const std::string& events_dir, std::span<const std::string> names,
                          std::vector<std::string>* missing);

// One record's fields, read through its format. Out-of-range reads give
// nullopt / empty, never read past the payload.
class RecordView {
 public:
  RecordView(const collect::TraceFormat& format, std::span<const uint8_t> payload)
      : format_(&format), payload_(payload) {}

  const collect::TraceField* Field(std::string_view name) const;
  std::optional<int64_t> Int(std::string_view name) const;    // sign-extended by the format
  std::optional<uint64_t> Uint(std::string_view name) const;
  // char[N] (up to its NUL), __data_loc char[] and __rel_loc char[] fields;
  // "char buf[]" (size 0, the rest of the record) for ftrace:print.
  std::string_view String(std::string_view name) const;

  uint16_t type() const;
  uint8_t flags() const;
  int32_t pid() const;

 private:
  std::optional<uint64_t> Raw(const collect::TraceField& f) const;
  const collect::TraceFormat* format_;
  std::span<const uint8_t> payload_;
};

// common_type of a record (its first two bytes); nullopt when too short.
std::optional<uint16_t> RecordType(std::span<const uint8_t> payload);

}  // namespace gpunoise::blackbox
