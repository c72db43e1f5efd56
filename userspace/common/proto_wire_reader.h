// Protobuf wire-format decoding by hand: the one streaming decoder, used by
// the trace reader (import/, tens of millions of events per second), the
// merger (through export/perfetto/wire_fields.h) and the GPU fragments' pid
// rewriting; field numbers come from the generated table
// (export/perfetto/protos/perfetto_fields.h), as for the encoder
// (common/proto_wire.h). libprotobuf's generated parsers build a full object
// tree per packet (every nested message, every string) before anything can be
// looked at; here a message is a byte span walked field by field, and packed
// columns are decoded in place.
//
// Nothing here allocates. A malformed message ends iteration with error()
// set and error_offset() naming where it went wrong (relative to the span
// the reader was given), so the trace reader can name a file offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gpunoise {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// Decodes a base-128 varint at `p`. Returns the byte after it, or nullptr
// when the varint runs past `end` or is longer than 10 bytes.
inline const uint8_t* ReadVarint(const uint8_t* p, const uint8_t* end, uint64_t* out) {
  // One- and two-byte varints are nearly all of what compact sched holds
  // (deltas, pids, small indexes): keep them branch-light.
  if (p < end && *p < 0x80) {
    *out = *p;
    return p + 1;
  }
  uint64_t value = 0;
  for (unsigned shift = 0; shift < 70 && p < end; shift += 7) {
    uint8_t byte = *p++;
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) {
      *out = value;
      return p;
    }
  }
  return nullptr;
}

struct ProtoField {
  uint32_t id = 0;
  WireType type = WireType::kVarint;
  uint64_t int_value = 0;  // varint, fixed64, fixed32
  const uint8_t* data = nullptr;  // length-delimited payload
  size_t size = 0;

  std::string_view as_string() const {
    return std::string_view(reinterpret_cast<const char*>(data), size);
  }
  int32_t as_int32() const { return static_cast<int32_t>(int_value); }
  uint32_t as_uint32() const { return static_cast<uint32_t>(int_value); }
  int64_t as_int64() const { return static_cast<int64_t>(int_value); }
  bool as_bool() const { return int_value != 0; }
  double as_double() const {
    double d;
    std::memcpy(&d, &int_value, sizeof(d));
    return d;
  }
};

// Walks the fields of one message.
class ProtoReader {
 public:
  ProtoReader(const uint8_t* begin, const uint8_t* end) : begin_(begin), p_(begin), end_(end) {}
  ProtoReader(const uint8_t* data, size_t size) : ProtoReader(data, data + size) {}
  explicit ProtoReader(const ProtoField& f) : ProtoReader(f.data, f.data + f.size) {}

  // Next field, or false at the end of the message or on malformed input
  // (then error() is true).
  bool Next(ProtoField* field) {
    if (p_ >= end_) return false;
    const uint8_t* field_start = p_;
    uint64_t tag;
    const uint8_t* p = ReadVarint(p_, end_, &tag);
    if (!p) return Fail(field_start);
    field->id = static_cast<uint32_t>(tag >> 3);
    field->type = static_cast<WireType>(tag & 7);
    if (field->id == 0) return Fail(field_start);
    switch (field->type) {
      case WireType::kVarint:
        p = ReadVarint(p, end_, &field->int_value);
        if (!p) return Fail(field_start);
        break;
      case WireType::kFixed64:
        if (end_ - p < 8) return Fail(field_start);
        std::memcpy(&field->int_value, p, 8);
        p += 8;
        break;
      case WireType::kFixed32: {
        if (end_ - p < 4) return Fail(field_start);
        uint32_t v;
        std::memcpy(&v, p, 4);
        field->int_value = v;
        p += 4;
        break;
      }
      case WireType::kLengthDelimited: {
        uint64_t len;
        p = ReadVarint(p, end_, &len);
        if (!p || len > static_cast<uint64_t>(end_ - p)) return Fail(field_start);
        field->data = p;
        field->size = static_cast<size_t>(len);
        p += len;
        break;
      }
      default:
        // Groups have been deprecated since proto2 and no Perfetto message
        // uses them; anything else is not a wire type at all.
        return Fail(field_start);
    }
    p_ = p;
    return true;
  }

  bool error() const { return error_; }
  size_t error_offset() const { return error_offset_; }
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }

 private:
  bool Fail(const uint8_t* at) {
    error_ = true;
    error_offset_ = static_cast<size_t>(at - begin_);
    p_ = end_;
    return false;
  }

  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  bool error_ = false;
  size_t error_offset_ = 0;
};

// Iterates a packed repeated varint field (or a single unpacked element).
class PackedVarints {
 public:
  PackedVarints() = default;
  PackedVarints(const uint8_t* begin, const uint8_t* end) : p_(begin), end_(end) {}
  explicit PackedVarints(const ProtoField& f) : PackedVarints(f.data, f.data + f.size) {}

  bool done() const { return p_ >= end_; }
  // False at the end or when the column is malformed (then error()).
  bool Next(uint64_t* value) {
    if (p_ >= end_) return false;
    const uint8_t* p = ReadVarint(p_, end_, value);
    if (!p) {
      error_ = true;
      p_ = end_;
      return false;
    }
    p_ = p;
    return true;
  }
  bool error() const { return error_; }

 private:
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  bool error_ = false;
};

// Number of varints in a packed column: one per byte without the
// continuation bit.
inline size_t CountPackedVarints(const ProtoField& f) {
  size_t n = 0;
  for (size_t i = 0; i < f.size; ++i) n += (f.data[i] & 0x80) == 0;
  return n;
}

}  // namespace gpunoise
