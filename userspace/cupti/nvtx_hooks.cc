#include "cupti/nvtx_hooks.h"

#define NVTX_NO_IMPL  // the types only: this is a tool, not an instrumented program
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

namespace gpunoise::cupti {
namespace {

// An nvtxEventAttributes_t may carry several payloads (reserved0 counts
// them); NCCL attaches one. More than this is not a collective's.
constexpr int32_t kMaxPayloadsPerEvent = 8;

uint64_t BoottimeNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The C-ABI handlers NVTX calls through its slots.
int NVTX_API PushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  NvtxHooks& h = NvtxHooks::Get();
  h.Observe(domain, attr);
  auto next = h.next_push.load(std::memory_order_acquire);
  return next ? next(domain, attr) : NVTX_NO_PUSH_POP_TRACKING;
}

nvtxRangeId_t NVTX_API StartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  NvtxHooks& h = NvtxHooks::Get();
  h.Observe(domain, attr);
  auto next = h.next_start.load(std::memory_order_acquire);
  return next ? next(domain, attr) : 0;
}

uint64_t NVTX_API SchemaRegister(nvtxDomainHandle_t domain, const nvtxPayloadSchemaAttr_t* attr) {
  return NvtxHooks::Get().OnSchemaRegister(domain, attr);
}

uint64_t NVTX_API EnumRegister(nvtxDomainHandle_t domain, const nvtxPayloadEnumAttr_t* attr) {
  return NvtxHooks::Get().OnEnumRegister(domain, attr);
}

// A slot NVTX or the previous tool left empty (fresh or disabled) holds no
// function to chain to.
bool IsFunction(intptr_t slot) { return slot != 0 && slot != 1; }

}  // namespace

NvtxHooks& NvtxHooks::Get() {
  static NvtxHooks* hooks = new NvtxHooks();  // never destroyed: NVTX calls come until the end
  return *hooks;
}

bool NvtxHooks::HookCore(NvtxGetExportTable get) {
  if (!get) return false;
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
  if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) || !callbacks->GetModuleFunctionTable)
    return false;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) return false;
  bool hooked = false;
  if (size > NVTX_CBID_CORE2_DomainRangePushEx && table[NVTX_CBID_CORE2_DomainRangePushEx]) {
    NvtxFunctionPointer* slot = table[NVTX_CBID_CORE2_DomainRangePushEx];
    if (*slot != reinterpret_cast<NvtxFunctionPointer>(&PushEx)) {
      next_push.store(reinterpret_cast<NvtxPushEx>(*slot), std::memory_order_release);
      *slot = reinterpret_cast<NvtxFunctionPointer>(&PushEx);
    }
    hooked = true;
  }
  if (size > NVTX_CBID_CORE2_DomainRangeStartEx && table[NVTX_CBID_CORE2_DomainRangeStartEx]) {
    NvtxFunctionPointer* slot = table[NVTX_CBID_CORE2_DomainRangeStartEx];
    if (*slot != reinterpret_cast<NvtxFunctionPointer>(&StartEx)) {
      next_start.store(reinterpret_cast<NvtxStartEx>(*slot), std::memory_order_release);
      *slot = reinterpret_cast<NvtxFunctionPointer>(&StartEx);
    }
    hooked = true;
  }
  return hooked;
}

int NvtxHooks::InitExtension(nvtxExtModuleInfo_t* info, NvtxExtensionInit chained) {
  int chained_ok = chained ? chained(info) : 0;
  if (!info || info->moduleId != NVTX_EXT_PAYLOAD_MODULEID || info->segmentsCount < 1 || !info->segments)
    return chained_ok;  // another extension: CUPTI's business, or none
  nvtxExtModuleSegment_t& seg = info->segments[0];
  if (!seg.functionSlots || seg.slotCount <= NVTX3EXT_CBID_nvtxPayloadEnumRegister) return chained_ok;
  intptr_t* slots = seg.functionSlots;
  // CUPTI's handlers, if it set any, keep running behind ours.
  if (IsFunction(slots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister]))
    next_schema.store(reinterpret_cast<NvtxSchemaRegister>(slots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister]));
  if (IsFunction(slots[NVTX3EXT_CBID_nvtxPayloadEnumRegister]))
    next_enum.store(reinterpret_cast<NvtxEnumRegister>(slots[NVTX3EXT_CBID_nvtxPayloadEnumRegister]));
  slots[NVTX3EXT_CBID_nvtxPayloadSchemaRegister] = reinterpret_cast<intptr_t>(&SchemaRegister);
  slots[NVTX3EXT_CBID_nvtxPayloadEnumRegister] = reinterpret_cast<intptr_t>(&EnumRegister);
  return 1;
}

uint64_t NvtxHooks::OnSchemaRegister(NvtxDomain domain, const nvtxPayloadSchemaAttr_v1* attr) {
  // A dynamic id is the handler's to choose; CUPTI's choice, if it chose,
  // is the one the program will put in its payloads.
  uint64_t id = 0;
  if (auto next = next_schema.load()) id = next(domain, attr);
  return registry_.RegisterSchema(domain, attr, id);
}

uint64_t NvtxHooks::OnEnumRegister(NvtxDomain domain, const nvtxPayloadEnumAttr_v1* attr) {
  uint64_t id = 0;
  if (auto next = next_enum.load()) id = next(domain, attr);
  return registry_.RegisterEnum(domain, attr, id);
}

void NvtxHooks::Observe(NvtxDomain domain, const nvtxEventAttributes_t* attr) {
  if (!attr || attr->payloadType != NVTX_PAYLOAD_TYPE_EXT || attr->payload.ullValue == 0) return;
  uint64_t ts = BoottimeNs();
  const auto* data = reinterpret_cast<const nvtxPayloadData_t*>(static_cast<uintptr_t>(attr->payload.ullValue));
  int32_t count = std::clamp(attr->reserved0, 1, kMaxPayloadsPerEvent);
  for (int32_t i = 0; i < count; ++i) {
    std::optional<NcclCallParams> p = registry_.Decode(domain, &data[i]);
    if (!p) continue;
    NcclCall call{static_cast<uint32_t>(::syscall(SYS_gettid)), ts, std::move(*p)};
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.size() >= kMaxPending) ++dropped_;
    else pending_.push_back(std::move(call));
    return;
  }
}

std::vector<NcclCall> NvtxHooks::Take(uint64_t* dropped) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<NcclCall> out;
  out.swap(pending_);
  if (dropped) *dropped = dropped_;
  dropped_ = 0;
  return out;
}

}  // namespace gpunoise::cupti
