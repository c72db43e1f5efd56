// Reading serialized protobuf messages field by field, without a schema:
// the merger copies and rewrites packets it does not fully know, so fields
// this project's subset does not declare survive byte for byte.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gpunoise::perfetto::wire {

// Parses a varint at data[*pos]; false if it runs past the end or is longer
// than ten bytes.
inline bool ParseVarint(std::string_view data, size_t* pos, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= data.size()) return false;
    uint8_t byte = static_cast<uint8_t>(data[(*pos)++]);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *value = v;
      return true;
    }
  }
  return false;
}

inline void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// One top-level field of a serialized message.
struct WireField {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t varint = 0;     // wire type 0
  std::string_view bytes;  // wire type 2: the payload
  size_t start = 0;        // where the field, tag included, starts
  size_t end = 0;          // and ends
};

// Calls `visit(const WireField&)` with each top-level field of `message`; a
// malformed field is an error naming the byte where it starts.
template <typename Visit>
Status ForEachField(std::string_view message, Visit&& visit) {
  size_t p = 0;
  while (p < message.size()) {
    WireField f;
    f.start = p;
    uint64_t tag = 0;
    if (!ParseVarint(message, &p, &tag)) return MakeError("malformed field tag at packet byte {}", f.start);
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire_type = static_cast<uint32_t>(tag & 7);
    switch (f.wire_type) {
      case 0:
        if (!ParseVarint(message, &p, &f.varint))
          return MakeError("malformed varint at packet byte {}", f.start);
        break;
      case 1:
        p += 8;
        break;
      case 2: {
        uint64_t len = 0;
        if (!ParseVarint(message, &p, &len) || len > message.size() - std::min(p, message.size()))
          return MakeError("field {} overruns the packet at packet byte {}", f.number, f.start);
        f.bytes = message.substr(p, len);
        p += len;
        break;
      }
      case 5:
        p += 4;
        break;
      default:
        return MakeError("unknown wire type {} at packet byte {}", f.wire_type, f.start);
    }
    if (p > message.size())
      return MakeError("field {} overruns the packet at packet byte {}", f.number, f.start);
    f.end = p;
    visit(f);
  }
  return OkStatus();
}

}  // namespace gpunoise::perfetto::wire
