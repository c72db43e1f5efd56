// The contract between the recorder and libgpunoise_cupti.so in training
// processes: the environment that turns capture on, and how fragment files
// are named. Header-only, because the injection library links nothing of
// gpunoise but its own code.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace gpunoise::model {

// Set by `gpunoise record -- CMD` and printed by `gpunoise env DIR`.
inline constexpr const char* kCudaInjectionEnv = "CUDA_INJECTION64_PATH";
inline constexpr const char* kNvtxInjectionEnv = "NVTX_INJECTION64_PATH";
// Directory the library writes its fragments to; capture is off without it.
inline constexpr const char* kGpuDirEnv = "GPUNOISE_GPU_DIR";
// Milliseconds between fragment flushes (default 1000): what a crash loses.
inline constexpr const char* kGpuFlushMsEnv = "GPUNOISE_GPU_FLUSH_MS";
// Seconds of fragments a process keeps in the directory (0: all). `gpunoise
// env` sets it so a long job does not fill the disk between recordings.
inline constexpr const char* kGpuKeepSecondsEnv = "GPUNOISE_GPU_KEEP_S";
// "all": every CUDA API call; default: launches, copies, memsets, waits.
inline constexpr const char* kGpuApiEnv = "GPUNOISE_GPU_API";
// "1": record each kernel of a CUDA graph instead of one slice per launch.
inline constexpr const char* kGpuGraphNodesEnv = "GPUNOISE_GPU_GRAPH_NODES";
// MiB of CUPTI activity buffers a process may hold (default 64).
inline constexpr const char* kGpuBufferMbEnv = "GPUNOISE_GPU_BUFFER_MB";
// Overrides where the library finds libcupti.
inline constexpr const char* kCuptiPathEnv = "GPUNOISE_CUPTI_PATH";

inline constexpr uint64_t kDefaultFlushMs = 1000;

// What each process's fragments say of CUPTI's own loss, for the recorder to
// count (gpu/cupti_drops.h): a counter track whose value is the process's
// dropped-record count so far, written in a fragment when it changed, and
// the same count as an arg of the summary instant of the process's last
// fragment.
inline constexpr std::string_view kCuptiDroppedRecordsTrack = "CUPTI dropped records";
inline constexpr std::string_view kCuptiCaptureSummaryEvent = "gpunoise GPU capture";
inline constexpr std::string_view kCuptiDroppedRecordsArg = "dropped_records";

// Fragment files: "gpunoise-gpu-<pid>-<BOOTTIME ns, 20 digits>.pftrace", one
// per flush, each a complete trace. Zero-padded so names sort by time.
inline constexpr std::string_view kFragmentPrefix = "gpunoise-gpu-";
inline constexpr std::string_view kFragmentSuffix = ".pftrace";

inline std::string FragmentFileName(int pid, uint64_t flush_ts) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "gpunoise-gpu-%d-%020llu.pftrace", pid,
                static_cast<unsigned long long>(flush_ts));
  return buf;
}

struct FragmentName {
  int pid = 0;
  uint64_t flush_ts = 0;
};

inline std::optional<FragmentName> ParseFragmentFileName(std::string_view name) {
  if (name.substr(0, kFragmentPrefix.size()) != kFragmentPrefix) return std::nullopt;
  if (name.size() <= kFragmentPrefix.size() + kFragmentSuffix.size() ||
      name.substr(name.size() - kFragmentSuffix.size()) != kFragmentSuffix)
    return std::nullopt;
  std::string_view rest = name.substr(kFragmentPrefix.size(),
                                      name.size() - kFragmentPrefix.size() - kFragmentSuffix.size());
  auto dash = rest.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == rest.size()) return std::nullopt;
  FragmentName out;
  uint64_t pid = 0;
  for (char c : rest.substr(0, dash)) {
    if (c < '0' || c > '9') return std::nullopt;
    pid = pid * 10 + static_cast<uint64_t>(c - '0');
    if (pid > 0x7fffffff) return std::nullopt;
  }
  for (char c : rest.substr(dash + 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    out.flush_ts = out.flush_ts * 10 + static_cast<uint64_t>(c - '0');
  }
  out.pid = static_cast<int>(pid);
  return out;
}

}  // namespace gpunoise::model
