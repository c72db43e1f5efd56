// A minimal protobuf wire-format writer, with no dependencies.
//
// libgpunoise_cupti.so writes its Perfetto packets with it because it is
// injected into programs that often carry their own libprotobuf (PyTorch,
// TensorFlow, ONNX runtime) of another version; two copies in one process
// clash on symbols and on the global descriptor pool. The recorder writes
// every packet with it (export/perfetto/trace_packet_builder.h), so no
// product binary links libprotobuf; for its per-event ftrace bundles the
// generated classes, which allocate a message per event, were most of the
// recorder's own CPU under a NET_RX storm. Field numbers come from the table generated from the subset
// .proto (export/perfetto/protos/perfetto_fields.h); the tests decode what is
// written with libprotobuf's classes of the same subset, an independent
// reading, and tools/check_proto_subset.sh checks the subset against upstream.
// Its reading counterpart is common/proto_wire_reader.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpunoise {

// Writes `value` as a varint at `p`; returns the byte after it (at most ten).
inline char* WriteRawVarint(char* p, uint64_t value) {
  while (value >= 0x80) {
    *p++ = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  *p++ = static_cast<char>(value);
  return p;
}

class ProtoWriter {
 public:
  explicit ProtoWriter(std::string* out) : out_(out) {}

  void Varint(uint32_t field, uint64_t value) {
    Tag(field, kWireVarint);
    RawVarint(value);
  }
  // int32/int64 fields: negative values take ten bytes, as protobuf does.
  void Int(uint32_t field, int64_t value) { Varint(field, static_cast<uint64_t>(value)); }
  void Bool(uint32_t field, bool value) { Varint(field, value ? 1 : 0); }
  void Fixed64(uint32_t field, uint64_t value);
  void Double(uint32_t field, double value);
  void Bytes(uint32_t field, std::string_view value) {
    Tag(field, kWireLengthDelimited);
    RawVarint(value.size());
    out_->append(value.data(), value.size());
  }

  // A nested message whose length is reserved as a four-byte varint and
  // filled in by EndNested (protobuf readers accept the padded form), so
  // nothing is moved however large it grows. Limited to 256 MiB.
  size_t BeginNested(uint32_t field);
  void EndNested(size_t token);

  // A nested message with its exact length: one byte is reserved and the
  // body is moved only if it reaches 128 bytes. For the many small messages
  // (one per kernel event), where three bytes of padding would be a fifth of
  // the event.
  size_t BeginMessage(uint32_t field) {
    Tag(field, kWireLengthDelimited);
    out_->push_back('\0');
    return out_->size();
  }
  void EndMessage(size_t token) {
    size_t len = out_->size() - token;
    if (len < 0x80) {
      (*out_)[token - 1] = static_cast<char>(len);
      return;
    }
    FixLongMessage(token, len);
  }

  void RawVarint(uint64_t value) {
    char buf[10];
    out_->append(buf, static_cast<size_t>(WriteRawVarint(buf, value) - buf));
  }

  std::string* out() const { return out_; }

 private:
  static constexpr uint32_t kWireVarint = 0;
  static constexpr uint32_t kWireFixed64 = 1;
  static constexpr uint32_t kWireLengthDelimited = 2;

  void Tag(uint32_t field, uint32_t wire_type) { RawVarint((static_cast<uint64_t>(field) << 3) | wire_type); }
  void FixLongMessage(size_t token, size_t len);

  std::string* out_;
};

// ProtoWriter's calls for a message whose largest size is known before it
// is written (a kernel event of fixed fields), into a buffer the caller
// sized for it: no capacity check per field. Under a NET_RX storm the
// recorder writes about a million such events a second, and std::string's
// checks on each of their seven or eight small appends were the most of
// its encoding time. The caller appends size() bytes where they belong.
class FixedProtoWriter {
 public:
  explicit FixedProtoWriter(char* buffer) : begin_(buffer), p_(buffer) {}

  void Varint(uint32_t field, uint64_t value) {
    Tag(field, 0);
    p_ = WriteRawVarint(p_, value);
  }
  void Int(uint32_t field, int64_t value) { Varint(field, static_cast<uint64_t>(value)); }
  // A nested message of under 128 bytes: one length byte, filled by EndMessage.
  char* BeginMessage(uint32_t field) {
    Tag(field, 2);
    return p_++;
  }
  void EndMessage(char* length_at) { *length_at = static_cast<char>(p_ - length_at - 1); }

  size_t size() const { return static_cast<size_t>(p_ - begin_); }
  std::string_view view() const { return {begin_, size()}; }

 private:
  void Tag(uint32_t field, uint32_t wire_type) {
    p_ = WriteRawVarint(p_, (static_cast<uint64_t>(field) << 3) | wire_type);
  }
  char* begin_;
  char* p_;
};

// Bytes a varint of `value` takes.
constexpr size_t VarintSize(uint64_t value) {
  size_t n = 1;
  for (; value >= 0x80; value >>= 7) ++n;
  return n;
}

// Frames one serialized TracePacket as Trace.packet, so files are a plain
// concatenation of packets.
void AppendFramedPacket(std::string_view packet, std::string* out);
// The size AppendFramedPacket adds for a packet of `packet_size` bytes.
size_t FramedPacketSize(size_t packet_size);

}  // namespace gpunoise
