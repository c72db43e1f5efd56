#include "cupti/injection_settings.h"

#include <cstdlib>
#include <string_view>

#include "cupti/activity_names.h"
#include "model/gpu_capture.h"

namespace gpunoise::cupti {
namespace {

bool ParseUint(const char* text, uint64_t* out) {
  if (!text || !*text) return false;
  uint64_t v = 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + static_cast<uint64_t>(*p - '0');
    if (v > (1ull << 40)) return false;
  }
  *out = v;
  return true;
}

}  // namespace

std::vector<int> ParseVisibleDevices(const char* value) {
  std::vector<int> out;
  if (!value) return out;
  std::string_view rest(value);
  while (true) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    bool numeric = !item.empty();
    bool negative = !item.empty() && item.front() == '-';
    int v = 0;
    for (size_t i = negative ? 1 : 0; i < item.size() && numeric; ++i) {
      if (item[i] < '0' || item[i] > '9' || v > 100000) numeric = false;
      else v = v * 10 + (item[i] - '0');
    }
    if (negative) break;  // CUDA stops at the first negative entry
    out.push_back(numeric ? v : -1);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

std::vector<int> ComposeVisibleDevices(const char* nvidia_visible, const char* cuda_visible,
                                       bool in_container) {
  std::vector<int> cuda = ParseVisibleDevices(cuda_visible);
  std::string_view nv = nvidia_visible ? nvidia_visible : "";
  if (!in_container || nv.empty() || nv == "all" || nv == "none" || nv == "void") return cuda;
  std::vector<int> exposed = ParseVisibleDevices(nvidia_visible);
  if (cuda.empty()) return exposed;
  std::vector<int> out;
  for (int c : cuda) out.push_back(c >= 0 && static_cast<size_t>(c) < exposed.size() ? exposed[c] : -1);
  return out;
}

InjectionSettings ReadInjectionSettings(
    const std::function<const char*(const char*)>& getenv_fn) {
  InjectionSettings s;
  if (const char* dir = getenv_fn(model::kGpuDirEnv)) s.dir = dir;
  uint64_t v = 0;
  if (ParseUint(getenv_fn(model::kGpuFlushMsEnv), &v) && v > 0) s.flush_ns = v * 1000000ull;
  if (ParseUint(getenv_fn(model::kGpuKeepSecondsEnv), &v)) s.keep_ns = v * 1000000000ull;
  if (const char* api = getenv_fn(model::kGpuApiEnv)) s.all_api = std::string_view(api) == "all";
  if (const char* g = getenv_fn(model::kGpuGraphNodesEnv)) s.graph_nodes = std::string_view(g) == "1";
  if (ParseUint(getenv_fn(model::kGpuBufferMbEnv), &v) && v > 0) {
    uint64_t total = v << 20;
    s.max_buffers = static_cast<size_t>(total / s.buffer_bytes);
    if (s.max_buffers < 2) s.max_buffers = 2;
  }
  s.hold_bytes = static_cast<size_t>(model::kDefaultHoldMb << 20);
  if (ParseUint(getenv_fn(model::kGpuHoldMbEnv), &v) && v < (1u << 16)) s.hold_bytes = static_cast<size_t>(v << 20);
  if (const char* path = getenv_fn(model::kCuptiPathEnv)) s.cupti_path = path;
  s.visible_devices = ParseVisibleDevices(getenv_fn("CUDA_VISIBLE_DEVICES"));
  s.rank = ParseRank(getenv_fn, {"RANK", "SLURM_PROCID"});
  s.local_rank = ParseRank(getenv_fn, {"LOCAL_RANK", "SLURM_LOCALID"});
  return s;
}

bool IsRecordedByDefault(const std::string& api_name) {
  std::string_view name = api_name;
  return IsLaunchLikeApi(name) || name.find("Synchronize") != std::string_view::npos ||
         name.find("StreamWaitEvent") != std::string_view::npos;
}

int32_t ParseRank(const std::function<const char*(const char*)>& getenv_fn,
                  std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* v = getenv_fn(name);
    if (!v || !*v) continue;
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (*end == '\0' && n >= 0 && n < (1L << 30)) return static_cast<int32_t>(n);
  }
  return -1;
}

}  // namespace gpunoise::cupti
