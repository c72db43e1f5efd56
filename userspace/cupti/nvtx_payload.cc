#include "cupti/nvtx_payload.h"

#define NVTX_NO_IMPL  // the types only: this is a tool, not an instrumented program
#include <nvtx3/nvToolsExtPayload.h>

#include <algorithm>
#include <cstring>
#include <string_view>

namespace gpunoise::cupti {
namespace {

// The entry names NCCL gives its collectives' schema fields
// (src/include/nvtx_payload_schemas.h): the schema's keys, the way a proto
// field has a name.
constexpr std::string_view kCommEntry = "NCCL communicator ID";
constexpr std::string_view kBytesEntry = "Message size [bytes]";
constexpr std::string_view kOpEntry = "Reduction operation";
constexpr std::string_view kRootEntry = "Root";
constexpr std::string_view kPeerEntry = "Peer rank";

// Sizes of the scalar entry types on LP64 Linux, the only ABI this library
// is built for. 0: not placed by this decoder (strings, arrays, nested).
uint32_t ScalarSize(uint64_t type) {
  switch (type) {
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR:
    case NVTX_PAYLOAD_ENTRY_TYPE_UCHAR:
    case NVTX_PAYLOAD_ENTRY_TYPE_INT8:
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT8:
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR8:
    case NVTX_PAYLOAD_ENTRY_TYPE_BYTE: return 1;
    case NVTX_PAYLOAD_ENTRY_TYPE_SHORT:
    case NVTX_PAYLOAD_ENTRY_TYPE_USHORT:
    case NVTX_PAYLOAD_ENTRY_TYPE_INT16:
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT16:
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR16: return 2;
    case NVTX_PAYLOAD_ENTRY_TYPE_INT:
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT:
    case NVTX_PAYLOAD_ENTRY_TYPE_INT32:
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT32:
    case NVTX_PAYLOAD_ENTRY_TYPE_FLOAT:
    case NVTX_PAYLOAD_ENTRY_TYPE_WCHAR:
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR32: return 4;
    case NVTX_PAYLOAD_ENTRY_TYPE_LONG:
    case NVTX_PAYLOAD_ENTRY_TYPE_ULONG:
    case NVTX_PAYLOAD_ENTRY_TYPE_LONGLONG:
    case NVTX_PAYLOAD_ENTRY_TYPE_ULONGLONG:
    case NVTX_PAYLOAD_ENTRY_TYPE_INT64:
    case NVTX_PAYLOAD_ENTRY_TYPE_UINT64:
    case NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE:
    case NVTX_PAYLOAD_ENTRY_TYPE_SIZE:
    case NVTX_PAYLOAD_ENTRY_TYPE_ADDRESS: return 8;
    default: return 0;
  }
}

bool IsSigned(uint64_t type) {
  switch (type) {
    case NVTX_PAYLOAD_ENTRY_TYPE_CHAR:
    case NVTX_PAYLOAD_ENTRY_TYPE_SHORT:
    case NVTX_PAYLOAD_ENTRY_TYPE_INT:
    case NVTX_PAYLOAD_ENTRY_TYPE_LONG:
    case NVTX_PAYLOAD_ENTRY_TYPE_LONGLONG:
    case NVTX_PAYLOAD_ENTRY_TYPE_INT8:
    case NVTX_PAYLOAD_ENTRY_TYPE_INT16:
    case NVTX_PAYLOAD_ENTRY_TYPE_INT32:
    case NVTX_PAYLOAD_ENTRY_TYPE_INT64: return true;
    default: return false;
  }
}

bool IsInteger(uint64_t type) {
  return type != NVTX_PAYLOAD_ENTRY_TYPE_FLOAT && type != NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE;
}

// An integer of `size` bytes at `p`, sign-extended when `is_signed`.
uint64_t ReadInt(const uint8_t* p, uint32_t size, bool is_signed) {
  uint64_t v = 0;
  std::memcpy(&v, p, size);  // little endian
  if (is_signed && size < 8 && (v >> (size * 8 - 1)) & 1) v |= ~uint64_t{0} << (size * 8);
  return v;
}

// NVTX_PAYLOAD_ENTRY_FLAG_ARRAY_*: a 3-bit kind at bits 4..6.
constexpr uint64_t kArrayFlags = uint64_t{7} << 4;

std::string CopyString(const char* s) { return s ? std::string(s, ::strnlen(s, 256)) : std::string(); }

}  // namespace

uint32_t PayloadSchemaRegistry::EntrySize(const void* domain, uint64_t type) const {
  if (uint32_t s = ScalarSize(type)) return s;
  auto it = enum_sizes_.find({domain, type});
  return it != enum_sizes_.end() ? it->second : 0;
}

uint64_t PayloadSchemaRegistry::RegisterSchema(const void* domain, const void* raw, uint64_t id) {
  const auto* attr = static_cast<const nvtxPayloadSchemaAttr_t*>(raw);
  std::lock_guard<std::mutex> lock(mu_);
  if (!attr || !(attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES) || !attr->entries ||
      attr->numEntries == 0 || attr->numEntries > kMaxEntries || schemas_.size() >= kMaxSchemas) {
    ++stats_.schemas_refused;
    return 0;
  }
  PayloadSchema s;
  // NCCL fills the name without setting its mask bit; its structs are
  // zero-initialized, as the NVTX docs ask, so a set pointer is a name.
  s.name = CopyString(attr->name);
  // Entries without an offset follow the previous one at their natural
  // alignment; after an entry of unknown size (a string, an array, a nested
  // struct) such entries cannot be placed and are not read.
  uint64_t end = 0;
  bool cursor_known = true;
  for (size_t i = 0; i < attr->numEntries; ++i) {
    const nvtxPayloadSchemaEntry_t& in = attr->entries[i];
    PayloadEntry e;
    e.type = in.type;
    e.flags = in.flags;
    e.name = CopyString(in.name);
    bool scalar = (in.flags & (NVTX_PAYLOAD_ENTRY_FLAG_POINTER | kArrayFlags)) == 0;
    e.size = scalar ? EntrySize(domain, in.type) : 0;
    if (i == 0 || in.offset != 0) {
      e.offset = in.offset;
      e.placed = e.size != 0;
    } else if (e.size && cursor_known) {
      e.offset = (end + e.size - 1) / e.size * e.size;
      e.placed = true;
    }
    if (e.placed) end = std::max(end, e.offset + e.size);
    else cursor_known = false;
    s.entries.push_back(std::move(e));
  }
  s.static_size = (attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE) && attr->payloadStaticSize
                      ? attr->payloadStaticSize
                      : end;
  if (id == 0) {
    bool is_static = (attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID) &&
                     attr->schemaId >= NVTX_PAYLOAD_SCHEMA_ID_STATIC_START &&
                     attr->schemaId < NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START;
    id = is_static ? attr->schemaId : NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START + next_dynamic_++;
  }
  schemas_[{domain, id}] = std::move(s);
  ++stats_.schemas;
  return id;
}

uint64_t PayloadSchemaRegistry::RegisterEnum(const void* domain, const void* raw, uint64_t id) {
  const auto* attr = static_cast<const nvtxPayloadEnumAttr_t*>(raw);
  std::lock_guard<std::mutex> lock(mu_);
  if (!attr || enum_sizes_.size() >= kMaxSchemas || attr->sizeOfEnum == 0 || attr->sizeOfEnum > 8) {
    ++stats_.schemas_refused;
    return 0;
  }
  if (id == 0) {
    bool is_static = attr->schemaId >= NVTX_PAYLOAD_SCHEMA_ID_STATIC_START &&
                     attr->schemaId < NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START;
    id = is_static ? attr->schemaId : NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START + next_dynamic_++;
  }
  enum_sizes_[{domain, id}] = static_cast<uint32_t>(attr->sizeOfEnum);
  return id;
}

std::optional<NcclCallParams> PayloadSchemaRegistry::Decode(const void* domain, const void* raw) {
  const auto* data = static_cast<const nvtxPayloadData_t*>(raw);
  std::lock_guard<std::mutex> lock(mu_);
  auto fail = [&]() -> std::optional<NcclCallParams> {
    ++stats_.undecodable;
    return std::nullopt;
  };
  if (!data || !data->payload) return fail();
  auto it = schemas_.find({domain, data->schemaId});
  if (it == schemas_.end()) return fail();
  const PayloadSchema& s = it->second;
  // SIZE_MAX: "figure it out"; a static layout's own size is the answer.
  uint64_t size = data->size == SIZE_MAX ? s.static_size : data->size;
  const auto* blob = static_cast<const uint8_t*>(data->payload);
  NcclCallParams p;
  p.schema = s.name;
  bool has_comm = false;
  for (const PayloadEntry& e : s.entries) {
    if (!e.placed || e.offset + e.size > size || !IsInteger(e.type)) continue;
    uint64_t v = ReadInt(blob + e.offset, e.size, IsSigned(e.type));
    if (e.name == kCommEntry) {
      p.comm = v;
      has_comm = true;
    } else if (e.name == kBytesEntry) {
      p.bytes = v;
      p.has_bytes = true;
    } else if (e.name == kOpEntry) {
      p.op = static_cast<int64_t>(v);
    } else if (e.name == kRootEntry) {
      p.root = static_cast<int64_t>(v);
    } else if (e.name == kPeerEntry) {
      p.peer = static_cast<int64_t>(v);
    }
  }
  if (!has_comm) return fail();
  ++stats_.decoded;
  return p;
}

PayloadStats PayloadSchemaRegistry::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::optional<PayloadSchema> PayloadSchemaRegistry::Find(const void* domain, uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = schemas_.find({domain, id});
  if (it == schemas_.end()) return std::nullopt;
  return it->second;
}

}  // namespace gpunoise::cupti
