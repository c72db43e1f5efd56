#include "doctor/nvml_library.h"

#include <dlfcn.h>

#include <vector>

namespace gpunoise::doctor {
namespace {

// nvmlMemoryErrorType_t and nvmlEccCounterType_t.
constexpr int kMemoryErrorCorrected = 0;
constexpr int kMemoryErrorUncorrected = 1;
constexpr int kVolatileEcc = 0;
constexpr int kAggregateEcc = 1;
// nvmlPageRetirementCause_t.
constexpr int kRetiredMultipleSingleBit = 0;
constexpr int kRetiredDoubleBit = 1;

using gpu::kNvmlErrorInsufficientSize;
using gpu::kNvmlSuccess;
using gpu::NvmlDevice;

}  // namespace

NvmlLibrary::~NvmlLibrary() {
  if (initialized_ && api_.Shutdown) api_.Shutdown();
}

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Load(const std::string& path) {
  auto api = gpu::LoadNvml(path);
  if (!api.ok()) return MakeError("failed to load NVML {}: {}", path, api.error().message);
  if (!api->DeviceGetHandleByPciBusId)
    return MakeError("failed to load NVML {}: missing nvmlDeviceGetHandleByPciBusId", path);
  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->api_ = *api;
  int rc = lib->api_.Init();
  if (rc != kNvmlSuccess)
    return MakeError("failed to initialize NVML: {} (error {})", lib->api_.Error(rc), rc);
  lib->initialized_ = true;
  return lib;
}

Result<GpuHealth> NvmlLibrary::Query(const std::string& pci_bdf) const {
  const gpu::NvmlApi& api = api_;
  NvmlDevice dev = nullptr;
  int rc = api.DeviceGetHandleByPciBusId(pci_bdf.c_str(), &dev);
  if (rc != kNvmlSuccess) return MakeError("failed to find GPU {} in NVML: {}", pci_bdf, api.Error(rc));
  GpuHealth h;
  if (int mode = 0; api.DeviceGetPersistenceMode && api.DeviceGetPersistenceMode(dev, &mode) == kNvmlSuccess)
    h.persistence_mode = mode != 0;
  if (unsigned long long reasons = 0; api.DeviceGetThrottleReasons && api.DeviceGetThrottleReasons(dev, &reasons) == kNvmlSuccess)
    h.throttle_reasons = reasons;
  if (int current = 0, pending = 0; api.DeviceGetEccMode && api.DeviceGetEccMode(dev, &current, &pending) == kNvmlSuccess)
    h.ecc_enabled = current != 0;
  if (api.DeviceGetTotalEccErrors) {
    unsigned long long n = 0;
    if (api.DeviceGetTotalEccErrors(dev, kMemoryErrorUncorrected, kVolatileEcc, &n) == kNvmlSuccess)
      h.ecc_uncorrected_volatile = n;
    if (api.DeviceGetTotalEccErrors(dev, kMemoryErrorUncorrected, kAggregateEcc, &n) == kNvmlSuccess)
      h.ecc_uncorrected_aggregate = n;
    if (api.DeviceGetTotalEccErrors(dev, kMemoryErrorCorrected, kVolatileEcc, &n) == kNvmlSuccess)
      h.ecc_corrected_volatile = n;
  }
  if (api.DeviceGetRetiredPages) {
    // A zero-sized query returns the count (with success when there are none,
    // else "insufficient size").
    auto count = [&](int cause) -> std::optional<unsigned> {
      unsigned pages = 0;
      int r = api.DeviceGetRetiredPages(dev, cause, &pages, nullptr);
      if (r == kNvmlSuccess || r == kNvmlErrorInsufficientSize) return pages;
      return std::nullopt;
    };
    h.retired_pages_sbe = count(kRetiredMultipleSingleBit);
    h.retired_pages_dbe = count(kRetiredDoubleBit);
  }
  if (int pending = 0; api.DeviceGetRetiredPagesPendingStatus && api.DeviceGetRetiredPagesPendingStatus(dev, &pending) == kNvmlSuccess)
    h.retired_pages_pending = pending != 0;
  if (api.DeviceGetRemappedRows) {
    unsigned corr = 0, unc = 0, pending = 0, failure = 0;
    if (api.DeviceGetRemappedRows(dev, &corr, &unc, &pending, &failure) == kNvmlSuccess)
      h.remapped_rows = RemappedRows{corr, unc, pending != 0, failure != 0};
  }
  if (unsigned replays = 0; api.DeviceGetPcieReplayCounter && api.DeviceGetPcieReplayCounter(dev, &replays) == kNvmlSuccess)
    h.pcie_replays = replays;
  return h;
}

NvmlAccess OpenNvml(const std::string& library_path) {
  NvmlAccess access;
  auto lib = NvmlLibrary::Load(library_path);
  if (!lib.ok()) {
    access.unavailable_reason = lib.error().message;
    return access;
  }
  std::shared_ptr<NvmlLibrary> shared = std::move(lib).value();
  access.query = [shared](const std::string& bdf) { return shared->Query(bdf); };
  return access;
}

}  // namespace gpunoise::doctor
