// The merger's view of common/proto_wire_reader.h: it copies and rewrites
// packets it does not fully know, so fields this project's subset does not
// declare survive byte for byte. Each field comes with where it starts and
// ends, and a malformed one is a Status naming the byte, for the merger's
// "corrupt at byte N" messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/proto_wire_reader.h"
#include "common/result.h"

namespace gpunoise::perfetto::wire {

inline const uint8_t* Bytes(std::string_view data) { return reinterpret_cast<const uint8_t*>(data.data()); }

// Parses a varint at data[*pos]; false if it runs past the end or is longer
// than ten bytes.
inline bool ParseVarint(std::string_view data, size_t* pos, uint64_t* value) {
  if (*pos > data.size()) return false;
  const uint8_t* p = ReadVarint(Bytes(data) + *pos, Bytes(data) + data.size(), value);
  if (!p) return false;
  *pos = static_cast<size_t>(p - Bytes(data));
  return true;
}

// One top-level field of a serialized message.
struct WireField {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t varint = 0;     // wire types 0, 1 and 5
  std::string_view bytes;  // wire type 2: the payload
  size_t start = 0;        // where the field, tag included, starts
  size_t end = 0;          // and ends
};

// Why ProtoReader stopped at `at`, in words.
Status DescribeMalformedField(std::string_view message, size_t at);

// Calls `visit(const WireField&)` with each top-level field of `message`; a
// malformed field is an error naming the byte where it starts.
template <typename Visit>
Status ForEachField(std::string_view message, Visit&& visit) {
  ProtoReader reader(Bytes(message), message.size());
  ProtoField f;
  size_t start = reader.offset();
  while (reader.Next(&f)) {
    WireField w;
    w.number = f.id;
    w.wire_type = static_cast<uint32_t>(f.type);
    w.varint = f.int_value;
    if (f.type == WireType::kLengthDelimited) w.bytes = f.as_string();
    w.start = start;
    w.end = start = reader.offset();
    visit(w);
  }
  if (reader.error()) return DescribeMalformedField(message, reader.error_offset());
  return OkStatus();
}

}  // namespace gpunoise::perfetto::wire
