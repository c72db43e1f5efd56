#include "common/proto_wire.h"

#include <cstring>

#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise {
namespace {
constexpr size_t kNestedLengthBytes = 4;
}  // namespace

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

void ProtoWriter::FixLongMessage(size_t token, size_t len) {
  char buf[10];
  size_t n = 0;
  for (size_t v = len; v >= 0x80; v >>= 7) buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
  buf[n] = static_cast<char>(len >> (7 * n));
  ++n;
  // The one reserved byte becomes n bytes: shift the body right by n - 1.
  out_->insert(token, n - 1, '\0');
  std::memcpy(out_->data() + token - 1, buf, n);
}

void AppendFramedPacket(std::string_view packet, std::string* out) {
  ProtoWriter(out).Bytes(pf::Trace::kPacket, packet);
}

size_t FramedPacketSize(size_t packet_size) {
  return VarintSize(pf::Trace::kPacket << 3 | 2) + VarintSize(packet_size) + packet_size;
}

}  // namespace gpunoise
