// NVML (libnvidia-ml.so.1) loaded at run time with dlopen, so gpunoise runs
// on nodes without the NVIDIA driver and needs no NVML headers to build.
// Only the handful of stable C entry points doctor reads are bound.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "doctor/gpu_health.h"

namespace gpunoise::doctor {

inline constexpr const char* kDefaultNvmlLibrary = "libnvidia-ml.so.1";

class NvmlLibrary {
 public:
  // dlopen()s `path`, binds the entry points and calls nvmlInit. Fails with
  // the loader's or NVML's reason (no driver, no library, no permission).
  static Result<std::unique_ptr<NvmlLibrary>> Load(const std::string& path);
  ~NvmlLibrary();  // nvmlShutdown
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  Result<GpuHealth> Query(const std::string& pci_bdf) const;

 private:
  NvmlLibrary() = default;
  gpu::NvmlApi api_;
  bool initialized_ = false;
};

// A GpuHealthSource over NVML, or the reason there is none.
struct NvmlAccess {
  GpuHealthSource query;  // empty when NVML is unavailable
  std::string unavailable_reason;
};
NvmlAccess OpenNvml(const std::string& library_path);

}  // namespace gpunoise::doctor
