#include "fake_nvtx_host.h"

#define NVTX_NO_IMPL  // the types only: this plays the library, it is not one
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <cstddef>

namespace gpunoise::testing {
namespace {

// NVTX's core table: one slot per callback id; the tool writes into them.
NvtxFunctionPointer g_core2[NVTX_CBID_CORE2_SIZE];
NvtxFunctionPointer* g_core2_table[NVTX_CBID_CORE2_SIZE + 1];
intptr_t g_payload_slots[64];
nvtxExtModuleSegment_t g_segment{0, 63, g_payload_slots};
int g_nccl_domain;  // the handle nvtxDomainCreateA("NCCL") would return

int NVTX_API GetModule(NvtxCallbackModule module, NvtxFunctionTable* table, unsigned int* size) {
  if (module != NVTX_CB_MODULE_CORE2) return 0;
  *table = g_core2_table;
  *size = NVTX_CBID_CORE2_SIZE;
  return 1;
}
const NvtxExportTableCallbacks kCallbacks{sizeof(NvtxExportTableCallbacks), &GetModule};
const void* NVTX_API GetExportTable(uint32_t id) { return id == NVTX_ETID_CALLBACKS ? &kCallbacks : nullptr; }

// NCCL's layout (nvtx_payload_schemas.h: NcclNvtxParamsAllReduce).
struct AllReduceParams {
  uint64_t comm;
  size_t bytes;
  int op;
};
constexpr uint64_t kRedOpId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 11;
constexpr uint64_t kAllReduceId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5;
const nvtxPayloadSchemaEntry_t kEntries[] = {
    {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", nullptr, 0, offsetof(AllReduceParams, comm), nullptr,
     nullptr},
    {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", nullptr, 0, offsetof(AllReduceParams, bytes), nullptr,
     nullptr},
    {0, kRedOpId, "Reduction operation", nullptr, 0, offsetof(AllReduceParams, op), nullptr, nullptr},
};

nvtxDomainHandle_t Domain() { return reinterpret_cast<nvtxDomainHandle_t>(&g_nccl_domain); }

}  // namespace

bool StartFakeNvtx(void* library) {
  for (int i = 1; i < NVTX_CBID_CORE2_SIZE; ++i) g_core2_table[i] = &g_core2[i];
  auto core = reinterpret_cast<int (*)(NvtxGetExportTableFunc_t)>(dlsym(library, "InitializeInjectionNvtx2"));
  auto ext = reinterpret_cast<int (*)(nvtxExtModuleInfo_t*)>(dlsym(library, "InitializeInjectionNvtxExtension"));
  if (!core || !ext || core(&GetExportTable) != 1) return false;
  nvtxExtModuleInfo_t info{};
  info.nvtxVer = NVTX_VERSION;
  info.structSize = sizeof(info);
  info.moduleId = NVTX_EXT_PAYLOAD_MODULEID;
  info.compatId = NVTX_EXT_PAYLOAD_COMPATID;
  info.segmentsCount = 1;
  info.segments = &g_segment;
  if (ext(&info) != 1) return false;
  // The hooks' own types: a call through another function type is undefined.
  using RegisterSchema = uint64_t (*)(nvtxDomainHandle_t, const nvtxPayloadSchemaAttr_t*);
  using RegisterEnum = uint64_t (*)(nvtxDomainHandle_t, const nvtxPayloadEnumAttr_t*);
  auto schema = reinterpret_cast<RegisterSchema>(g_payload_slots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister]);
  auto enums = reinterpret_cast<RegisterEnum>(g_payload_slots[NVTX3EXT_CBID_nvtxPayloadEnumRegister]);
  if (!schema || !enums) return false;
  nvtxPayloadEnumAttr_t redop{};
  redop.fieldMask = NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME;
  redop.name = "ncclRedOp_t";
  redop.sizeOfEnum = sizeof(int);
  redop.schemaId = kRedOpId;
  enums(Domain(), &redop);
  nvtxPayloadSchemaAttr_t attr{};
  attr.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                   NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE |
                   NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;
  attr.name = "AllReduce";  // NCCL sets it without the mask bit
  attr.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
  attr.entries = kEntries;
  attr.numEntries = 3;
  attr.payloadStaticSize = sizeof(AllReduceParams);
  attr.schemaId = kAllReduceId;
  return schema(Domain(), &attr) == kAllReduceId;
}

void FakeNcclAllReduce(uint64_t comm, size_t bytes, int op, void (*body)()) {
  AllReduceParams p{comm, bytes, op};
  nvtxPayloadData_t data[] = {{kAllReduceId, sizeof(p), &p}};
  nvtxEventAttributes_t ev{};
  ev.version = NVTX_VERSION;
  ev.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  ev.messageType = NVTX_MESSAGE_TYPE_ASCII;
  ev.message.ascii = "ncclAllReduce";
  ev.payloadType = NVTX_PAYLOAD_TYPE_EXT;
  ev.reserved0 = 1;
  ev.payload.ullValue = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data));
  using Push = int (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*);
  using Pop = int (*)(nvtxDomainHandle_t);
  auto push = reinterpret_cast<Push>(g_core2[NVTX_CBID_CORE2_DomainRangePushEx]);
  auto pop = reinterpret_cast<Pop>(g_core2[NVTX_CBID_CORE2_DomainRangePop]);
  if (push) push(Domain(), &ev);
  if (body) body();
  if (pop) pop(Domain());
}

}  // namespace gpunoise::testing
