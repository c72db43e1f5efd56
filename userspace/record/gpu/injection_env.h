// The environment that turns GPU capture on in a CUDA program: what
// `gpunoise record -- CMD` gives its command and `gpunoise env DIR` prints.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace gpunoise::gpu {

// Finds libgpunoise_cupti.so: $GPUNOISE_CUPTI_LIB, else beside the gpunoise
// binary (build tree), else ../lib/gpunoise/ from it (installed).
Result<std::string> FindInjectionLibrary(const std::string& exe_path);

struct InjectionEnvOptions {
  std::string library;  // absolute path of libgpunoise_cupti.so
  std::string dir;      // absolute fragment directory
  uint64_t flush_ms = 0;   // 0: the library's default
  uint64_t keep_seconds = 0;  // 0: keep every fragment
  bool nvtx = true;     // route NVTX to CUPTI
};

// Name/value pairs, in a stable order.
std::vector<std::pair<std::string, std::string>> InjectionEnvironment(const InjectionEnvOptions& o);

// `KEY='value'` lines for a POSIX shell (`eval "$(gpunoise env DIR)"`).
std::string FormatShellExports(const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace gpunoise::gpu
