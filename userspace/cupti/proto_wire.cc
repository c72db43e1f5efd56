#include "cupti/proto_wire.h"

#include <cstring>

namespace gpunoise::cupti {
namespace {
constexpr uint32_t kWireVarint = 0;
constexpr uint32_t kWireFixed64 = 1;
constexpr uint32_t kWireLengthDelimited = 2;
constexpr size_t kNestedLengthBytes = 4;
}  // namespace

void ProtoWriter::RawVarint(uint64_t value) {
  while (value >= 0x80) {
    out_->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out_->push_back(static_cast<char>(value));
}

void ProtoWriter::Tag(uint32_t field, uint32_t wire_type) {
  RawVarint((static_cast<uint64_t>(field) << 3) | wire_type);
}

void ProtoWriter::Varint(uint32_t field, uint64_t value) {
  Tag(field, kWireVarint);
  RawVarint(value);
}

void ProtoWriter::Fixed64(uint32_t field, uint64_t value) {
  Tag(field, kWireFixed64);
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  out_->append(bytes, sizeof(bytes));
}

void ProtoWriter::Double(uint32_t field, double value) {
  uint64_t bits;
  static_assert(sizeof(bits) == sizeof(value));
  std::memcpy(&bits, &value, sizeof(bits));
  Fixed64(field, bits);
}

void ProtoWriter::Bytes(uint32_t field, std::string_view value) {
  Tag(field, kWireLengthDelimited);
  RawVarint(value.size());
  out_->append(value.data(), value.size());
}

size_t ProtoWriter::BeginNested(uint32_t field) {
  Tag(field, kWireLengthDelimited);
  size_t at = out_->size();
  out_->append(kNestedLengthBytes, '\0');
  return at;
}

void ProtoWriter::EndNested(size_t token) {
  size_t len = out_->size() - token - kNestedLengthBytes;
  char* p = out_->data() + token;
  for (size_t i = 0; i < kNestedLengthBytes; ++i) {
    uint8_t byte = static_cast<uint8_t>(len & 0x7f);
    len >>= 7;
    if (i + 1 < kNestedLengthBytes) byte |= 0x80;
    p[i] = static_cast<char>(byte);
  }
}

void AppendFramedPacket(std::string_view packet, std::string* out) {
  ProtoWriter(out).Bytes(1, packet);
}

}  // namespace gpunoise::cupti
