#include "cupti/cupti_library.h"

#include <dlfcn.h>

#include <vector>

#ifndef GPUNOISE_CUPTI_SONAME
#define GPUNOISE_CUPTI_SONAME "libcupti.so"
#endif
#ifndef GPUNOISE_CUPTI_BUILD_PATH
#define GPUNOISE_CUPTI_BUILD_PATH ""
#endif

namespace gpunoise::cupti {

std::string CuptiLibrary::ResultName(CUptiResult result) const {
  const char* text = nullptr;
  if (GetResultString && GetResultString(result, &text) == CUPTI_SUCCESS && text) return text;
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

namespace {

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* out, bool required, std::string* missing) {
  *out = reinterpret_cast<Fn>(::dlsym(handle, name));
  if (!*out && required) {
    *missing = name;
    return false;
  }
  return true;
}

}  // namespace

bool LoadCupti(const std::string& explicit_path, CuptiLibrary* lib, std::string* error) {
  std::vector<std::string> candidates;
  if (!explicit_path.empty()) {
    candidates.push_back(explicit_path);
  } else {
    candidates.push_back(GPUNOISE_CUPTI_SONAME);
    if (*GPUNOISE_CUPTI_BUILD_PATH) candidates.push_back(GPUNOISE_CUPTI_BUILD_PATH);
  }
  std::string last_error;
  for (const auto& path : candidates) {
    lib->handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib->handle) {
      lib->path = path;
      break;
    }
    const char* e = ::dlerror();
    last_error = e ? e : path;
  }
  if (!lib->handle) {
    *error = "failed to load libcupti: " + last_error;
    return false;
  }
  std::string missing;
  bool ok = Resolve(lib->handle, "cuptiGetVersion", &lib->GetVersion, true, &missing) &&
            Resolve(lib->handle, "cuptiGetResultString", &lib->GetResultString, true, &missing) &&
            Resolve(lib->handle, "cuptiGetCallbackName", &lib->GetCallbackName, true, &missing) &&
            Resolve(lib->handle, "cuptiActivityRegisterCallbacks", &lib->RegisterCallbacks, true, &missing) &&
            Resolve(lib->handle, "cuptiActivityRegisterTimestampCallback",
                    &lib->RegisterTimestampCallback, true, &missing) &&
            Resolve(lib->handle, "cuptiSetThreadIdType", &lib->SetThreadIdType, true, &missing) &&
            Resolve(lib->handle, "cuptiActivityEnable", &lib->Enable, true, &missing) &&
            Resolve(lib->handle, "cuptiActivityEnableRuntimeApi", &lib->EnableRuntimeApi, false, &missing) &&
            Resolve(lib->handle, "cuptiActivityEnableDriverApi", &lib->EnableDriverApi, false, &missing) &&
            Resolve(lib->handle, "cuptiActivityGetNextRecord", &lib->GetNextRecord, true, &missing) &&
            Resolve(lib->handle, "cuptiActivityGetNumDroppedRecords", &lib->GetNumDroppedRecords,
                    true, &missing) &&
            Resolve(lib->handle, "cuptiActivityFlushAll", &lib->FlushAll, true, &missing) &&
            Resolve(lib->handle, "cuptiSubscribe", &lib->Subscribe, false, &missing) &&
            Resolve(lib->handle, "cuptiUnsubscribe", &lib->Unsubscribe, false, &missing) &&
            Resolve(lib->handle, "InitializeInjectionNvtx2", &lib->InitializeInjectionNvtx2, false,
                    &missing) &&
            Resolve(lib->handle, "InitializeInjectionNvtxExtension", &lib->InitializeInjectionNvtxExtension,
                    false, &missing);
  if (!ok) {
    *error = lib->path + " lacks " + missing + " (CUPTI too old)";
    return false;
  }
  if (lib->GetVersion(&lib->version) != CUPTI_SUCCESS) {
    *error = "failed to read the CUPTI version of " + lib->path;
    return false;
  }
  // Record layouts (CUpti_ActivityKernel10, ...) come from the headers this
  // library was built with; an older CUPTI writes older layouts.
  if (lib->version < CUPTI_API_VERSION) {
    *error = "CUPTI API version " + std::to_string(lib->version) + " of " + lib->path +
             " is older than " + std::to_string(CUPTI_API_VERSION) + ", which gpunoise was built for";
    return false;
  }
  return true;
}

}  // namespace gpunoise::cupti
