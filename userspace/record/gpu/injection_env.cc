#include "record/gpu/injection_env.h"

#include <unistd.h>

#include <cstdlib>

#include "common/files.h"
#include "model/gpu_capture.h"

namespace gpunoise::gpu {
namespace {
constexpr const char* kLibraryName = "libgpunoise_cupti.so";

std::string DirOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}
}  // namespace

Result<std::string> FindInjectionLibrary(const std::string& exe_path) {
  if (const char* explicit_path = std::getenv("GPUNOISE_CUPTI_LIB")) {
    if (::access(explicit_path, R_OK) == 0) return std::string(explicit_path);
    return MakeError("GPUNOISE_CUPTI_LIB={} is not readable", explicit_path);
  }
  std::string dir = DirOf(exe_path);
  for (const std::string& candidate :
       {dir + "/" + kLibraryName, dir + "/../lib/gpunoise/" + kLibraryName}) {
    if (::access(candidate.c_str(), R_OK) == 0) {
      char* real = ::realpath(candidate.c_str(), nullptr);
      std::string out = real ? real : candidate;
      std::free(real);
      return out;
    }
  }
  return MakeError("{} not found beside {} (gpunoise was built without CUDA's CUPTI?)",
                   kLibraryName, exe_path);
}

std::vector<std::pair<std::string, std::string>> InjectionEnvironment(const InjectionEnvOptions& o) {
  std::vector<std::pair<std::string, std::string>> env;
  env.emplace_back(model::kCudaInjectionEnv, o.library);
  // NVTX hands its calls to the library named here; ours passes them on to
  // CUPTI, so NCCL's and PyTorch's ranges become marker records.
  if (o.nvtx) env.emplace_back(model::kNvtxInjectionEnv, o.library);
  env.emplace_back(model::kGpuDirEnv, o.dir);
  if (o.flush_ms) env.emplace_back(model::kGpuFlushMsEnv, std::to_string(o.flush_ms));
  if (o.keep_seconds) env.emplace_back(model::kGpuKeepSecondsEnv, std::to_string(o.keep_seconds));
  return env;
}

std::string FormatShellExports(const std::vector<std::pair<std::string, std::string>>& env) {
  std::string out;
  for (const auto& [key, value] : env) {
    std::string quoted = "'";
    for (char c : value) {
      if (c == '\'') quoted += "'\\''";
      else quoted += c;
    }
    quoted += "'";
    out += "export " + key + "=" + quoted + "\n";
  }
  return out;
}

}  // namespace gpunoise::gpu
