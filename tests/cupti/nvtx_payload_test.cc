// The NVTX extended-payload decoder and hooks: NCCL-layout schemas and
// blobs as NCCL registers and attaches them (nvtx_payload_schemas.h: a
// struct per collective, entry offsets from offsetof, the reduction op an
// enum registered under a static schema id).
#include "cupti/nvtx_payload.h"

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "cupti/activity_converter.h"
#include "cupti/nvtx_hooks.h"
#include "export/perfetto/trace_view.h"
#include <cstring>

namespace gpunoise::cupti {
namespace {

struct AllReduceParams {  // NCCL's NcclNvtxParamsAllReduce layout
  uint64_t comm;
  size_t bytes;
  int op;  // ncclRedOp_t
};
struct BroadcastParams {
  uint64_t comm;
  size_t bytes;
  int root;
};

constexpr uint64_t kRedOpEnumId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 11;
constexpr uint64_t kAllReduceId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5;
constexpr uint64_t kBroadcastId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 6;
int g_domain;  // a domain handle is an opaque pointer
const void* const kDomain = &g_domain;

const nvtxPayloadSchemaEntry_t kAllReduceEntries[] = {
    {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", nullptr, 0, offsetof(AllReduceParams, comm), nullptr, nullptr},
    {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", nullptr, 0, offsetof(AllReduceParams, bytes), nullptr, nullptr},
    {0, kRedOpEnumId, "Reduction operation", nullptr, 0, offsetof(AllReduceParams, op), nullptr, nullptr},
};
// No offsets: natural alignment places the entries.
const nvtxPayloadSchemaEntry_t kBroadcastEntries[] = {
    {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", nullptr, 0, 0, nullptr, nullptr},
    {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", nullptr, 0, 0, nullptr, nullptr},
    {0, NVTX_PAYLOAD_ENTRY_TYPE_INT, "Root", nullptr, 0, 0, nullptr, nullptr},
};

nvtxPayloadSchemaAttr_t Schema(const char* name, const nvtxPayloadSchemaEntry_t* entries, size_t n, uint64_t id) {
  nvtxPayloadSchemaAttr_t a{};
  a.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;
  a.name = name;
  a.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
  a.entries = entries;
  a.numEntries = n;
  a.schemaId = id;
  return a;
}

void RegisterRedOp(PayloadSchemaRegistry& r) {
  nvtxPayloadEnumAttr_t e{};
  e.sizeOfEnum = sizeof(int);
  e.schemaId = kRedOpEnumId;
  ASSERT_EQ(r.RegisterEnum(kDomain, &e), kRedOpEnumId);
}

TEST(NvtxPayload, DecodesNcclAllReduceFields) {
  PayloadSchemaRegistry r;
  RegisterRedOp(r);
  auto attr = Schema("AllReduce", kAllReduceEntries, 3, kAllReduceId);
  ASSERT_EQ(r.RegisterSchema(kDomain, &attr), kAllReduceId);
  AllReduceParams p{0xabcdef0123456789ull, 1 << 20, 2};
  nvtxPayloadData_t d{kAllReduceId, sizeof(p), &p};
  auto got = r.Decode(kDomain, &d);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->schema, "AllReduce");
  EXPECT_EQ(got->comm, 0xabcdef0123456789ull);
  EXPECT_TRUE(got->has_bytes);
  EXPECT_EQ(got->bytes, 1u << 20);
  EXPECT_EQ(got->op, 2);
  EXPECT_EQ(got->root, -1);
  EXPECT_EQ(r.stats().decoded, 1u);
}

TEST(NvtxPayload, PlacesEntriesWithoutOffsetsByNaturalAlignment) {
  PayloadSchemaRegistry r;
  auto attr = Schema("Broadcast", kBroadcastEntries, 3, kBroadcastId);
  ASSERT_EQ(r.RegisterSchema(kDomain, &attr), kBroadcastId);
  auto s = r.Find(kDomain, kBroadcastId);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->entries[1].offset, offsetof(BroadcastParams, bytes));
  EXPECT_EQ(s->entries[2].offset, offsetof(BroadcastParams, root));
  BroadcastParams p{7, 4096, -3};
  nvtxPayloadData_t d{kBroadcastId, SIZE_MAX, &p};  // SIZE_MAX: the static layout's size
  auto got = r.Decode(kDomain, &d);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->comm, 7u);
  EXPECT_EQ(got->bytes, 4096u);
  EXPECT_EQ(got->root, -3);  // sign-extended
}

TEST(NvtxPayload, RefusesBlobsItCannotReadSafely) {
  PayloadSchemaRegistry r;
  RegisterRedOp(r);
  auto attr = Schema("AllReduce", kAllReduceEntries, 3, kAllReduceId);
  r.RegisterSchema(kDomain, &attr);
  AllReduceParams p{1, 2, 3};
  // Too small for the communicator: nothing read past the blob.
  nvtxPayloadData_t small{kAllReduceId, 4, &p};
  EXPECT_FALSE(r.Decode(kDomain, &small));
  // Unknown schema id, or another domain's.
  nvtxPayloadData_t unknown{kAllReduceId + 100, sizeof(p), &p};
  EXPECT_FALSE(r.Decode(kDomain, &unknown));
  int other_domain;
  nvtxPayloadData_t ok{kAllReduceId, sizeof(p), &p};
  EXPECT_FALSE(r.Decode(&other_domain, &ok));
  nvtxPayloadData_t null_blob{kAllReduceId, sizeof(p), nullptr};
  EXPECT_FALSE(r.Decode(kDomain, &null_blob));
  EXPECT_EQ(r.stats().undecodable, 4u);
  // The op enum's size unknown (not registered): the op is skipped, the rest read.
  PayloadSchemaRegistry no_enum;
  no_enum.RegisterSchema(kDomain, &attr);
  auto got = no_enum.Decode(kDomain, &ok);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->op, -1);
  EXPECT_EQ(got->bytes, 2u);
}

TEST(NvtxPayload, NonNcclSchemaIsNotACall) {
  PayloadSchemaRegistry r;
  const nvtxPayloadSchemaEntry_t entries[] = {{0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "iteration", nullptr, 0, 0, nullptr, nullptr}};
  nvtxPayloadSchemaAttr_t attr = Schema("step", entries, 1, 0);
  attr.fieldMask &= ~uint64_t{NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID};
  uint64_t id = r.RegisterSchema(kDomain, &attr);
  EXPECT_GE(id, NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START);  // a dynamic id, chosen here
  uint64_t v = 5;
  nvtxPayloadData_t d{id, sizeof(v), &v};
  EXPECT_FALSE(r.Decode(kDomain, &d));
  // Malformed attributes are refused, not stored.
  nvtxPayloadSchemaAttr_t empty{};
  EXPECT_EQ(r.RegisterSchema(kDomain, &empty), 0u);
  EXPECT_EQ(r.stats().schemas_refused, 1u);
}

// The hooks as NVTX drives them: the payload extension's slots get the
// schema handlers, the core table's push slot gets ours in front of the
// previous tool's, and a push with an NCCL payload is decoded and queued
// while the previous handler still runs.
int g_cupti_pushes = 0;
int NVTX_API CuptiPush(nvtxDomainHandle_t, const nvtxEventAttributes_t*) { return ++g_cupti_pushes; }

NvtxFunctionPointer g_core2_slots[NVTX_CBID_CORE2_SIZE];
NvtxFunctionPointer* g_core2_table[NVTX_CBID_CORE2_SIZE + 1];
int NVTX_API GetModule(NvtxCallbackModule module, NvtxFunctionTable* table, unsigned int* size) {
  if (module != NVTX_CB_MODULE_CORE2) return 0;
  *table = g_core2_table;
  *size = NVTX_CBID_CORE2_SIZE;
  return 1;
}
const NvtxExportTableCallbacks kCallbacks{sizeof(NvtxExportTableCallbacks), &GetModule};
const void* NVTX_API GetExportTable(uint32_t id) { return id == NVTX_ETID_CALLBACKS ? &kCallbacks : nullptr; }

TEST(NvtxHooks, DecodesNcclPushesAndChainsToThePreviousHandler) {
  for (int i = 1; i < NVTX_CBID_CORE2_SIZE; ++i) g_core2_table[i] = &g_core2_slots[i];
  g_core2_slots[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&CuptiPush);
  NvtxHooks& hooks = NvtxHooks::Get();
  ASSERT_TRUE(hooks.HookCore(&GetExportTable));

  intptr_t slots[63] = {};
  nvtxExtModuleSegment_t seg{0, 63, slots};
  nvtxExtModuleInfo_t info{};
  info.moduleId = NVTX_EXT_PAYLOAD_MODULEID;
  info.segmentsCount = 1;
  info.segments = &seg;
  ASSERT_EQ(hooks.InitExtension(&info, nullptr), 1);
  ASSERT_NE(slots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister], 0);
  // The hooks' own types: a call through another function type is undefined.
  using RegisterSchema = uint64_t (*)(nvtxDomainHandle_t, const nvtxPayloadSchemaAttr_t*);
  using RegisterEnum = uint64_t (*)(nvtxDomainHandle_t, const nvtxPayloadEnumAttr_t*);
  auto* domain = reinterpret_cast<nvtxDomainHandle_t>(const_cast<void*>(kDomain));
  nvtxPayloadEnumAttr_t redop{};
  redop.sizeOfEnum = sizeof(int);
  redop.schemaId = kRedOpEnumId;
  reinterpret_cast<RegisterEnum>(slots[NVTX3EXT_CBID_nvtxPayloadEnumRegister])(domain, &redop);
  auto attr = Schema("AllReduce", kAllReduceEntries, 3, kAllReduceId);
  EXPECT_EQ(reinterpret_cast<RegisterSchema>(slots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister])(domain, &attr), kAllReduceId);

  AllReduceParams p{0x5eed, 256, 0};
  nvtxPayloadData_t data[] = {{kAllReduceId, sizeof(p), &p}};
  nvtxEventAttributes_t ev{};
  ev.version = NVTX_VERSION;
  ev.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  ev.payloadType = NVTX_PAYLOAD_TYPE_EXT;
  ev.reserved0 = 1;
  ev.payload.ullValue = reinterpret_cast<uintptr_t>(data);
  using Push = int (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*);
  auto push = reinterpret_cast<Push>(g_core2_slots[NVTX_CBID_CORE2_DomainRangePushEx]);
  ASSERT_NE(push, &CuptiPush);
  EXPECT_EQ(push(domain, &ev), 1);  // CUPTI's handler ran, its result returned
  nvtxEventAttributes_t plain{};    // no payload: nothing queued, still chained
  EXPECT_EQ(push(domain, &plain), 2);

  uint64_t dropped = 99;
  std::vector<NcclCall> calls = hooks.Take(&dropped);
  EXPECT_EQ(dropped, 0u);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].params.comm, 0x5eedu);
  EXPECT_EQ(calls[0].params.bytes, 256u);
  EXPECT_EQ(calls[0].params.op, 0);
  EXPECT_GT(calls[0].tid, 0u);
  EXPECT_GT(calls[0].ts, 0u);
}

CUpti_ActivityMarker2 Marker(CUpti_ActivityFlag flag, uint32_t id, uint64_t ts, uint32_t tid, const char* name) {
  CUpti_ActivityMarker2 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = flag;
  m.id = id;
  m.timestamp = ts;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 4242;
  m.objectId.pt.threadId = tid;
  m.name = name;
  m.domain = "NCCL";
  return m;
}

// CUPTI's range records arrive after the hooks decoded the calls: each
// range takes the latest call on its thread at or before its start; its
// typed fields become the slice's args, and calls without a range are
// counted in the capture summary.
TEST(NvtxPayload, ConverterJoinsDecodedCallsWithTheirRanges) {
  ConverterOptions o;
  o.pid = 4242;
  o.node_id = "5a0c9d5e-0000-4000-8000-000000000001";
  o.start_ts = 10;
  ActivityConverter c(o);
  NcclCallParams a;
  a.schema = "AllReduce";
  a.comm = 0xc0ffee;
  a.has_bytes = true;
  a.bytes = 4096;
  a.op = 0;
  NcclCallParams orphan = a;
  orphan.comm = 1;
  NcclCallParams b;
  b.schema = "Broadcast";
  b.comm = 0xbeef;
  b.root = 3;
  // orphan at 90 and a at 99 both precede the first range (start 100) on
  // thread 7: a is its call, orphan never got a range. b (thread 8) waits
  // for thread 8's range; the call at 500 on thread 7 for a later one.
  NcclCall late{7, 500, a};
  c.AddNcclCalls({{7, 90, orphan}, {7, 99, a}, {8, 150, b}, late}, 2);
  auto s1 = Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 7, "ncclAllReduce");
  auto e1 = Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 200, 7, nullptr);
  auto s2 = Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 160, 8, "ncclBroadcast");
  auto e2 = Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 170, 8, nullptr);
  for (auto* m : {&s1, &e1, &s2, &e2}) c.Convert(reinterpret_cast<const CUpti_Activity*>(m));
  testing::TraceView v(c.TakeChunk(ClockReadings{1000, 993, 1099}, true));
  auto r1 = v.SlicesOn(c.ThreadTrackUuid(7));
  ASSERT_EQ(r1.size(), 1u);
  ASSERT_NE(r1[0].Arg("nccl_comm"), nullptr);
  EXPECT_EQ(r1[0].Arg("nccl_comm")->uint_value(), 0xc0ffeeu);
  EXPECT_EQ(r1[0].Arg("nccl_bytes")->uint_value(), 4096u);
  EXPECT_EQ(r1[0].Arg("nccl_op")->int_value(), 0);
  EXPECT_EQ(r1[0].Arg("nccl_schema")->string_value(), "AllReduce");
  EXPECT_EQ(r1[0].Arg("payload"), nullptr);
  auto r2 = v.SlicesOn(c.ThreadTrackUuid(8));
  ASSERT_EQ(r2.size(), 1u);
  EXPECT_EQ(r2[0].Arg("nccl_comm")->uint_value(), 0xbeefu);
  EXPECT_EQ(r2[0].Arg("nccl_root")->int_value(), 3);
  EXPECT_EQ(r2[0].Arg("nccl_bytes"), nullptr);  // absent from the call: not written
  EXPECT_EQ(c.stats().nccl_payloads, 2u);
  EXPECT_EQ(c.stats().nccl_payloads_unmatched, 1u);
  EXPECT_EQ(c.stats().nccl_payloads_dropped, 2u);
  auto summary = v.InstantNamed("gpunoise GPU capture");
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->Arg("nccl_payloads_unmatched")->uint_value(), 2u);  // + the one still pending
}

}  // namespace
}  // namespace gpunoise::cupti
