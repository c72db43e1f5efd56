// NVTX extended payloads (nvToolsExtPayload.h): a program registers a
// schema (the layout of a C struct: entry types, offsets, names) and then
// attaches binary blobs of that layout to its ranges. NCCL 2.19+ does so on
// every collective's range ("NCCL" domain): the communicator's hash, the
// message size, the reduction op, the root or peer. The blob is a pointer
// into the program's stack, valid only during the NVTX call, so it must be
// decoded there: this registry keeps the schemas a program registered and
// turns one blob into typed fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpunoise::cupti {

// The fields of one NCCL call, from its range's payload. -1: absent.
struct NcclCallParams {
  std::string schema;  // the schema's registered name: "AllReduce", "Send", ...
  uint64_t comm = 0;   // the communicator's hash ("NCCL communicator ID")
  bool has_bytes = false;
  uint64_t bytes = 0;  // "Message size [bytes]"
  int64_t op = -1;     // "Reduction operation" (ncclRedOp_t)
  int64_t root = -1;   // "Root"
  int64_t peer = -1;   // "Peer rank"
};

// One NCCL call decoded from its range's payload. `ts` is BOOTTIME (the
// clock the library gives CUPTI), taken just before CUPTI's handler runs,
// so it is at or before the range's start in CUPTI's record.
struct NcclCall {
  uint32_t tid = 0;
  uint64_t ts = 0;
  NcclCallParams params;
};

// One entry of a registered schema, as far as decoding needs it.
struct PayloadEntry {
  uint64_t type = 0;     // NVTX_PAYLOAD_ENTRY_TYPE_* or a registered enum's schema id
  uint64_t flags = 0;
  uint64_t offset = 0;   // resolved (explicit, or by natural alignment)
  uint32_t size = 0;     // bytes; 0: a type this decoder does not read
  bool placed = false;   // offset known and size known: readable
  std::string name;
};

struct PayloadSchema {
  std::string name;
  std::vector<PayloadEntry> entries;
  uint64_t static_size = 0;  // explicit or the end of the last placed entry
};

struct PayloadStats {
  uint64_t schemas = 0;        // registered
  uint64_t schemas_refused = 0;  // over the cap or malformed
  uint64_t decoded = 0;        // blobs turned into NCCL call fields
  uint64_t undecodable = 0;    // unknown schema, too small, or not an NCCL call's layout
};

// Thread-safe: NVTX calls come from any of the program's threads.
class PayloadSchemaRegistry {
 public:
  static constexpr size_t kMaxSchemas = 4096;
  static constexpr size_t kMaxEntries = 64;

  // `attr` is an nvtxPayloadSchemaAttr_t. Returns the schema's id: `id` when
  // not 0 (the id another handler chose), else its static id when it gave
  // one, else a new dynamic id; 0 when refused.
  uint64_t RegisterSchema(const void* domain, const void* attr, uint64_t id = 0);
  // `attr` is an nvtxPayloadEnumAttr_t: only its size matters here (an
  // entry of this enum's type takes that many bytes). Ids as above.
  uint64_t RegisterEnum(const void* domain, const void* attr, uint64_t id = 0);
  // `data` is an nvtxPayloadData_t. nullopt when the blob is not an NCCL
  // call's (no communicator field) or cannot be read safely.
  std::optional<NcclCallParams> Decode(const void* domain, const void* data);

  PayloadStats stats() const;
  // For tests: the stored layout of a schema.
  std::optional<PayloadSchema> Find(const void* domain, uint64_t id) const;

 private:
  using Key = std::pair<const void*, uint64_t>;
  uint32_t EntrySize(const void* domain, uint64_t type) const;  // mu_ held

  mutable std::mutex mu_;
  std::map<Key, PayloadSchema> schemas_;
  std::map<Key, uint32_t> enum_sizes_;
  uint64_t next_dynamic_ = 0;
  PayloadStats stats_;
};

}  // namespace gpunoise::cupti
