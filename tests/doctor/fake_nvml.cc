// A stand-in for libnvidia-ml.so.1 so that doctor's dlopen path is tested on
// machines without a GPU. It exports the entry points doctor binds, with
// NVML's C signatures, and answers from environment variables:
//   GN_FAKE_NVML_INIT_ERROR    nvmlInit fails with NVML_ERROR_DRIVER_NOT_LOADED
//   GN_FAKE_NVML_BDF           the one GPU it knows (default 0000:03:00.0)
//   GN_FAKE_NVML_PERSISTENCE   0/1 (default 1)
//   GN_FAKE_NVML_THROTTLE      clock event reason mask (default 1: idle)
//   GN_FAKE_NVML_ECC_UNC       volatile uncorrectable ECC errors (default 0)
//   GN_FAKE_NVML_RETIRED_DBE   pages retired for double-bit errors (default 0)
//   GN_FAKE_NVML_REPLAYS       PCIe replay count at the first read (default 0)
//   GN_FAKE_NVML_REPLAY_STEP   added on every later read (default 0)
// Row remapping reports "not supported", as on pre-Ampere GPUs.
// The entry points take the caller's own types (collect/nvml_api.h): a call
// through a pointer of another function type is undefined, and clang's
// -fsanitize=function stops it even where only the handle's type differs.
#include <cstdlib>
#include <cstring>

#include "collect/nvml_api.h"

namespace {

constexpr int kSuccess = 0;
constexpr int kNotSupported = 3;
constexpr int kNotFound = 6;
constexpr int kInsufficientSize = 7;
constexpr int kDriverNotLoaded = 9;

unsigned long long Env(const char* name, unsigned long long fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 0) : fallback;
}

int replay_reads = 0;

}  // namespace

extern "C" {

int nvmlInit_v2() { return std::getenv("GN_FAKE_NVML_INIT_ERROR") ? kDriverNotLoaded : kSuccess; }
int nvmlShutdown() { return kSuccess; }

const char* nvmlErrorString(int rc) {
  switch (rc) {
    case kSuccess: return "Success";
    case kNotSupported: return "Not Supported";
    case kNotFound: return "Not Found";
    case kDriverNotLoaded: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, gpunoise::gpu::NvmlDevice* device) {
  const char* known = std::getenv("GN_FAKE_NVML_BDF");
  if (std::strcmp(bus_id, known ? known : "0000:03:00.0") != 0) return kNotFound;
  static int the_gpu;
  *device = reinterpret_cast<gpunoise::gpu::NvmlDevice>(&the_gpu);
  return kSuccess;
}

int nvmlDeviceGetPersistenceMode(gpunoise::gpu::NvmlDevice, int* mode) {
  *mode = static_cast<int>(Env("GN_FAKE_NVML_PERSISTENCE", 1));
  return kSuccess;
}

int nvmlDeviceGetCurrentClocksEventReasons(gpunoise::gpu::NvmlDevice, unsigned long long* reasons) {
  *reasons = Env("GN_FAKE_NVML_THROTTLE", 1);
  return kSuccess;
}

int nvmlDeviceGetEccMode(gpunoise::gpu::NvmlDevice, int* current, int* pending) {
  *current = *pending = 1;
  return kSuccess;
}

int nvmlDeviceGetTotalEccErrors(gpunoise::gpu::NvmlDevice, int error_type, int counter_type, unsigned long long* count) {
  // Uncorrected (1) volatile (0) comes from the environment; the rest are 0.
  *count = error_type == 1 && counter_type == 0 ? Env("GN_FAKE_NVML_ECC_UNC", 0) : 0;
  return kSuccess;
}

int nvmlDeviceGetRetiredPages(gpunoise::gpu::NvmlDevice, int cause, unsigned* page_count, unsigned long long* addresses) {
  unsigned pages = cause == 1 ? static_cast<unsigned>(Env("GN_FAKE_NVML_RETIRED_DBE", 0)) : 0;
  if (*page_count < pages) {
    *page_count = pages;
    return kInsufficientSize;
  }
  for (unsigned i = 0; i < pages && addresses; ++i) addresses[i] = 0x1000ull * (i + 1);
  *page_count = pages;
  return kSuccess;
}

int nvmlDeviceGetRetiredPagesPendingStatus(gpunoise::gpu::NvmlDevice, int* pending) {
  *pending = 0;
  return kSuccess;
}

int nvmlDeviceGetRemappedRows(gpunoise::gpu::NvmlDevice, unsigned*, unsigned*, unsigned*, unsigned*) { return kNotSupported; }

int nvmlDeviceGetPcieReplayCounter(gpunoise::gpu::NvmlDevice, unsigned* value) {
  *value = static_cast<unsigned>(Env("GN_FAKE_NVML_REPLAYS", 0) + Env("GN_FAKE_NVML_REPLAY_STEP", 0) * replay_reads++);
  return kSuccess;
}

}  // extern "C"
