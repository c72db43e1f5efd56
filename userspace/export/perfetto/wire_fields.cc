#include "export/perfetto/wire_fields.h"

namespace gpunoise::perfetto::wire {

// Only on the error path: ProtoReader says where, this says why.
Status DescribeMalformedField(std::string_view message, size_t at) {
  size_t p = at;
  uint64_t tag = 0;
  if (!ParseVarint(message, &p, &tag)) return MakeError("malformed field tag at packet byte {}", at);
  uint64_t number = tag >> 3;
  uint32_t wire_type = static_cast<uint32_t>(tag & 7);
  if (number == 0) return MakeError("field number 0 at packet byte {}", at);
  switch (static_cast<WireType>(wire_type)) {
    case WireType::kVarint: {
      uint64_t value = 0;
      if (!ParseVarint(message, &p, &value)) return MakeError("malformed varint at packet byte {}", at);
      break;
    }
    case WireType::kFixed64:
    case WireType::kFixed32:
    case WireType::kLengthDelimited:
      return MakeError("field {} overruns the packet at packet byte {}", number, at);
    default:
      return MakeError("unknown wire type {} at packet byte {}", wire_type, at);
  }
  return MakeError("malformed field at packet byte {}", at);
}

}  // namespace gpunoise::perfetto::wire
