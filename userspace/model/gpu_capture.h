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
// MiB of converted GPU data a process holds back while its fragment
// directory is not writable yet (default 32; 0: none, capture stays off).
inline constexpr const char* kGpuHoldMbEnv = "GPUNOISE_GPU_HOLD_MB";
inline constexpr uint64_t kDefaultHoldMb = 32;
// The summary instant's count of chunks dropped from the held-back ones.
inline constexpr std::string_view kCuptiChunksNotWrittenArg = "chunks_not_written";
// Overrides where the library finds libcupti.
inline constexpr const char* kCuptiPathEnv = "GPUNOISE_CUPTI_PATH";

inline constexpr uint64_t kDefaultFlushMs = 1000;

// What each process's fragments say of CUPTI's own loss, for the recorder to
// count (record/gpu/cupti_drops.h): a counter track whose value is the process's
// dropped-record count so far, written in a fragment when it changed, and
// the same count as an arg of the summary instant of the process's last
// fragment.
inline constexpr std::string_view kCuptiDroppedRecordsTrack = "CUPTI dropped records";
inline constexpr std::string_view kCuptiCaptureSummaryEvent = "gpunoise GPU capture";
inline constexpr std::string_view kCuptiDroppedRecordsArg = "dropped_records";
// A process whose CUPTI already had a subscriber (torch.profiler/Kineto,
// dynolog, Nsight): the library stays out of the way and writes one
// fragment with this instant on the process's track, args "pid" (inside
// its pid namespace) and "reason", so the recorder can say which process it
// could not capture.
inline constexpr std::string_view kCuptiCaptureOffEvent = "gpunoise GPU capture off";

// Fragment files: "gpunoise-gpu-<pid>-<BOOTTIME ns, 20 digits>.pftrace", one
// per flush, each a complete trace. Zero-padded so names sort by time. A
// library that knows its pid namespace adds "-ns<inode of /proc/self/ns/pid>"
// before the suffix (0: it could not read it): <pid> is then the pid inside
// that namespace, and so are the pids and tids inside the fragment; the
// recorder translates them to host ids (record/gpu/fragment_pid_translator.h).
// Recorders before that read only names without it.
inline constexpr std::string_view kFragmentPrefix = "gpunoise-gpu-";
inline constexpr std::string_view kFragmentSuffix = ".pftrace";

inline std::string FragmentFileName(int pid, uint64_t flush_ts) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "gpunoise-gpu-%d-%020llu.pftrace", pid,
                static_cast<unsigned long long>(flush_ts));
  return buf;
}

inline std::string FragmentFileName(int pid, uint64_t flush_ts, uint64_t pid_ns) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "gpunoise-gpu-%d-%020llu-ns%llu.pftrace", pid,
                static_cast<unsigned long long>(flush_ts), static_cast<unsigned long long>(pid_ns));
  return buf;
}

struct FragmentName {
  int pid = 0;
  uint64_t flush_ts = 0;
  bool has_pid_ns = false;  // named with "-ns<inode>"
  uint64_t pid_ns = 0;      // 0 with has_pid_ns: the library could not tell
};

inline bool ParseFragmentDigits(std::string_view digits, uint64_t limit, uint64_t* out) {
  if (digits.empty() || digits.size() > 20) return false;
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

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
  if (!ParseFragmentDigits(rest.substr(0, dash), 0x7fffffff, &pid)) return std::nullopt;
  std::string_view after = rest.substr(dash + 1);
  auto ns = after.find("-ns");
  std::string_view ts = ns == std::string_view::npos ? after : after.substr(0, ns);
  if (!ParseFragmentDigits(ts, ~0ull, &out.flush_ts)) return std::nullopt;
  if (ns != std::string_view::npos) {
    if (!ParseFragmentDigits(after.substr(ns + 3), ~0ull, &out.pid_ns)) return std::nullopt;
    out.has_pid_ns = true;
  }
  out.pid = static_cast<int>(pid);
  return out;
}

}  // namespace gpunoise::model
