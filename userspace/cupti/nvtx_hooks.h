// NVTX calls seen before CUPTI's handlers, for what CUPTI's marker records
// cannot carry: an extended payload (NCCL's schema'd struct on each
// collective's range) is a pointer into the caller's stack, so its fields
// are read here, during the call, and handed to the converter as typed
// NCCL calls (thread, time), which it joins with CUPTI's range records.
//
// Two entry points of an NVTX injection library are involved:
// InitializeInjectionNvtx2 (the core API: after CUPTI has filled the
// function table, the range push/start handlers are wrapped) and
// InitializeInjectionNvtxExtension (the payload extension's schema and
// enum registration, which CUPTI may or may not handle: chained when it
// does).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cupti/nvtx_abi.h"
#include "cupti/nvtx_payload.h"

namespace gpunoise::cupti {

class NvtxHooks {
 public:
  static constexpr size_t kMaxPending = 1 << 16;

  static NvtxHooks& Get();

  // Wraps the core table's DomainRangePushEx and DomainRangeStartEx slots
  // (whatever CUPTI put there stays behind ours). False when the table is
  // not there.
  bool HookCore(NvtxGetExportTable get_export_table);
  // For InitializeInjectionNvtxExtension: `chained` is CUPTI's own extension
  // entry point (nullptr if it has none), run first. Returns what NVTX
  // expects (1: ok).
  int InitExtension(nvtxExtModuleInfo_t* module_info, NvtxExtensionInit chained);

  // The decoded calls since the last Take; `dropped` gets how many did not
  // fit (kMaxPending) since then.
  std::vector<NcclCall> Take(uint64_t* dropped);
  PayloadSchemaRegistry& registry() { return registry_; }

  // The handlers (public for the C trampolines).
  void Observe(NvtxDomain domain, const nvtxEventAttributes_v2* event_attributes);
  uint64_t OnSchemaRegister(NvtxDomain domain, const nvtxPayloadSchemaAttr_v1* attr);
  uint64_t OnEnumRegister(NvtxDomain domain, const nvtxPayloadEnumAttr_v1* attr);

  std::atomic<NvtxPushEx> next_push{nullptr};
  std::atomic<NvtxStartEx> next_start{nullptr};
  std::atomic<NvtxSchemaRegister> next_schema{nullptr};
  std::atomic<NvtxEnumRegister> next_enum{nullptr};

 private:
  NvtxHooks() = default;
  PayloadSchemaRegistry registry_;
  std::mutex mu_;
  std::vector<NcclCall> pending_;
  uint64_t dropped_ = 0;
};

}  // namespace gpunoise::cupti
