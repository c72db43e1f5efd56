// libcupti, opened with dlopen when capture starts rather than linked: a
// node without it, or with an older one, then costs the training program
// one line on stderr instead of a failed library load inside cuInit.
#pragma once

#include <cupti.h>

#include <string>

#include "cupti/nvtx_abi.h"

namespace gpunoise::cupti {

struct CuptiLibrary {
  void* handle = nullptr;
  std::string path;  // what was opened
  uint32_t version = 0;

  decltype(&::cuptiGetVersion) GetVersion = nullptr;
  decltype(&::cuptiGetResultString) GetResultString = nullptr;
  decltype(&::cuptiGetCallbackName) GetCallbackName = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) RegisterCallbacks = nullptr;
  decltype(&::cuptiActivityRegisterTimestampCallback) RegisterTimestampCallback = nullptr;
  decltype(&::cuptiSetThreadIdType) SetThreadIdType = nullptr;
  decltype(&::cuptiActivityEnable) Enable = nullptr;
  decltype(&::cuptiActivityEnableRuntimeApi) EnableRuntimeApi = nullptr;  // optional
  decltype(&::cuptiActivityEnableDriverApi) EnableDriverApi = nullptr;    // optional
  decltype(&::cuptiActivityGetNextRecord) GetNextRecord = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) GetNumDroppedRecords = nullptr;
  decltype(&::cuptiActivityFlushAll) FlushAll = nullptr;
  // Optional: probing for another CUPTI client (one subscriber per process).
  decltype(&::cuptiSubscribe) Subscribe = nullptr;
  decltype(&::cuptiUnsubscribe) Unsubscribe = nullptr;
  // CUPTI's NVTX entry point, for NVTX_INJECTION64_PATH pointing at us.
  int (*InitializeInjectionNvtx2)(NvtxGetExportTable get_export_table) = nullptr;
  // Optional: CUPTI's entry point for NVTX extensions (payload schemas).
  NvtxExtensionInit InitializeInjectionNvtxExtension = nullptr;

  // "CUPTI_ERROR_UNKNOWN" for a result code.
  std::string ResultName(CUptiResult result) const;
};

// Opens libcupti: `explicit_path` if given, else the one already in the
// process or on the library path (the major version this was built with),
// else the one found at build time. Refuses a CUPTI older than the headers
// the record layouts were compiled from. Returns false with `error` set.
bool LoadCupti(const std::string& explicit_path, CuptiLibrary* lib, std::string* error);

}  // namespace gpunoise::cupti
