// The NVTX C types that gpunoise's CUPTI headers name, declared without
// NVTX's headers. The entry points NVTX calls and the handlers they chain
// to (CUPTI's, or a previous tool's) are called through these, their own
// function types: a call through a pointer of another function type is
// undefined, and clang's -fsanitize=function stops it.
#pragma once

#include <cstdint>

struct nvtxDomainRegistration_st;  // nvtxDomainHandle_t points at one
struct nvtxEventAttributes_v2;     // nvtxEventAttributes_t
struct nvtxPayloadSchemaAttr_v1;   // nvtxPayloadSchemaAttr_t
struct nvtxPayloadEnumAttr_v1;     // nvtxPayloadEnumAttr_t
struct nvtxExtModuleInfo_t;

namespace gpunoise::cupti {

using NvtxDomain = nvtxDomainRegistration_st*;
// NvtxGetExportTableFunc_t: what InitializeInjectionNvtx2 is handed.
using NvtxGetExportTable = const void* (*)(uint32_t export_table_id);
// The core table's nvtxDomainRangePushEx and nvtxDomainRangeStartEx slots.
using NvtxPushEx = int (*)(NvtxDomain, const nvtxEventAttributes_v2*);
using NvtxStartEx = uint64_t (*)(NvtxDomain, const nvtxEventAttributes_v2*);
// The payload extension's schema and enum registration slots.
using NvtxSchemaRegister = uint64_t (*)(NvtxDomain, const nvtxPayloadSchemaAttr_v1*);
using NvtxEnumRegister = uint64_t (*)(NvtxDomain, const nvtxPayloadEnumAttr_v1*);
// NvtxExtInitializeInjectionFunc_t: InitializeInjectionNvtxExtension.
using NvtxExtensionInit = int (*)(nvtxExtModuleInfo_t* module_info);

}  // namespace gpunoise::cupti
