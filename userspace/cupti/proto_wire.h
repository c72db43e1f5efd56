// A minimal protobuf wire-format writer for the Perfetto packets that
// libgpunoise_cupti.so writes from inside training processes.
//
// Why not libprotobuf: the library is injected into programs that often
// carry their own libprotobuf (PyTorch, TensorFlow, ONNX runtime) of another
// version; two copies in one process clash on symbols and on the global
// descriptor pool. Encoding by hand keeps the library free of that risk, and
// the tests decode everything it writes with the full generated subset
// (export/perfetto/protos), whose field numbers are pinned to upstream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpunoise::cupti {

class ProtoWriter {
 public:
  explicit ProtoWriter(std::string* out) : out_(out) {}

  void Varint(uint32_t field, uint64_t value);
  // int32/int64 fields: negative values take ten bytes, as protobuf does.
  void Int(uint32_t field, int64_t value) { Varint(field, static_cast<uint64_t>(value)); }
  void Bool(uint32_t field, bool value) { Varint(field, value ? 1 : 0); }
  void Fixed64(uint32_t field, uint64_t value);
  void Double(uint32_t field, double value);
  void Bytes(uint32_t field, std::string_view value);

  // A nested message: its length is reserved as a four-byte varint and
  // filled in by EndNested (protobuf readers accept the padded form), so
  // nothing is copied. Nested messages are limited to 256 MiB.
  size_t BeginNested(uint32_t field);
  void EndNested(size_t token);

  std::string* out() const { return out_; }

 private:
  void Tag(uint32_t field, uint32_t wire_type);
  void RawVarint(uint64_t value);

  std::string* out_;
};

// Frames one serialized TracePacket as field 1 of perfetto.protos.Trace, so
// files are a plain concatenation of packets.
void AppendFramedPacket(std::string_view packet, std::string* out);

}  // namespace gpunoise::cupti
