#include "doctor/nvml_library.h"

#include <dlfcn.h>

#include <vector>

namespace gpunoise::doctor {
namespace {

// nvmlReturn_t values used here (nvml.h); enums are passed as int.
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlErrorInsufficientSize = 7;
// nvmlMemoryErrorType_t and nvmlEccCounterType_t.
constexpr int kMemoryErrorCorrected = 0;
constexpr int kMemoryErrorUncorrected = 1;
constexpr int kVolatileEcc = 0;
constexpr int kAggregateEcc = 1;
// nvmlPageRetirementCause_t.
constexpr int kRetiredMultipleSingleBit = 0;
constexpr int kRetiredDoubleBit = 1;

using NvmlDevice = void*;

}  // namespace

struct NvmlLibrary::Api {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  int (*persistence_mode)(NvmlDevice, int*) = nullptr;
  int (*throttle_reasons)(NvmlDevice, unsigned long long*) = nullptr;
  int (*ecc_mode)(NvmlDevice, int*, int*) = nullptr;
  int (*total_ecc_errors)(NvmlDevice, int, int, unsigned long long*) = nullptr;
  int (*retired_pages)(NvmlDevice, int, unsigned*, unsigned long long*) = nullptr;
  int (*retired_pages_pending)(NvmlDevice, int*) = nullptr;
  int (*remapped_rows)(NvmlDevice, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  int (*pcie_replay_counter)(NvmlDevice, unsigned*) = nullptr;
};

NvmlLibrary::NvmlLibrary() : api_(std::make_unique<Api>()) {}

NvmlLibrary::~NvmlLibrary() {
  if (initialized_ && api_->shutdown) api_->shutdown();
  if (handle_) dlclose(handle_);
}

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Load(const std::string& path) {
  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_) {
    const char* why = dlerror();
    return MakeError("failed to load NVML {}: {}", path, why ? why : "unknown error");
  }
  // The first name is the current ABI; later ones are what older drivers export.
  auto bind = [&](auto& fn, std::initializer_list<const char*> names) {
    for (const char* name : names) {
      if (void* sym = dlsym(lib->handle_, name)) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
        return true;
      }
    }
    return false;
  };
  Api& api = *lib->api_;
  if (!bind(api.init, {"nvmlInit_v2", "nvmlInit"}) || !bind(api.shutdown, {"nvmlShutdown"}) ||
      !bind(api.handle_by_pci_bus_id, {"nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId"}))
    return MakeError("failed to load NVML {}: missing nvmlInit or nvmlDeviceGetHandleByPciBusId", path);
  bind(api.error_string, {"nvmlErrorString"});
  bind(api.persistence_mode, {"nvmlDeviceGetPersistenceMode"});
  bind(api.throttle_reasons, {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  bind(api.ecc_mode, {"nvmlDeviceGetEccMode"});
  bind(api.total_ecc_errors, {"nvmlDeviceGetTotalEccErrors"});
  bind(api.retired_pages, {"nvmlDeviceGetRetiredPages"});
  bind(api.retired_pages_pending, {"nvmlDeviceGetRetiredPagesPendingStatus"});
  bind(api.remapped_rows, {"nvmlDeviceGetRemappedRows"});
  bind(api.pcie_replay_counter, {"nvmlDeviceGetPcieReplayCounter"});
  int rc = api.init();
  if (rc != kNvmlSuccess) {
    const char* why = api.error_string ? api.error_string(rc) : nullptr;
    return MakeError("failed to initialize NVML: {} (error {})", why ? why : "unknown", rc);
  }
  lib->initialized_ = true;
  return lib;
}

Result<GpuHealth> NvmlLibrary::Query(const std::string& pci_bdf) const {
  const Api& api = *api_;
  NvmlDevice dev = nullptr;
  int rc = api.handle_by_pci_bus_id(pci_bdf.c_str(), &dev);
  if (rc != kNvmlSuccess) {
    const char* why = api.error_string ? api.error_string(rc) : nullptr;
    return MakeError("failed to find GPU {} in NVML: {}", pci_bdf, why ? why : std::to_string(rc));
  }
  GpuHealth h;
  if (int mode = 0; api.persistence_mode && api.persistence_mode(dev, &mode) == kNvmlSuccess)
    h.persistence_mode = mode != 0;
  if (unsigned long long reasons = 0; api.throttle_reasons && api.throttle_reasons(dev, &reasons) == kNvmlSuccess)
    h.throttle_reasons = reasons;
  if (int current = 0, pending = 0; api.ecc_mode && api.ecc_mode(dev, &current, &pending) == kNvmlSuccess)
    h.ecc_enabled = current != 0;
  if (api.total_ecc_errors) {
    unsigned long long n = 0;
    if (api.total_ecc_errors(dev, kMemoryErrorUncorrected, kVolatileEcc, &n) == kNvmlSuccess)
      h.ecc_uncorrected_volatile = n;
    if (api.total_ecc_errors(dev, kMemoryErrorUncorrected, kAggregateEcc, &n) == kNvmlSuccess)
      h.ecc_uncorrected_aggregate = n;
    if (api.total_ecc_errors(dev, kMemoryErrorCorrected, kVolatileEcc, &n) == kNvmlSuccess)
      h.ecc_corrected_volatile = n;
  }
  if (api.retired_pages) {
    // A zero-sized query returns the count (with success when there are none,
    // else "insufficient size").
    auto count = [&](int cause) -> std::optional<unsigned> {
      unsigned pages = 0;
      int r = api.retired_pages(dev, cause, &pages, nullptr);
      if (r == kNvmlSuccess || r == kNvmlErrorInsufficientSize) return pages;
      return std::nullopt;
    };
    h.retired_pages_sbe = count(kRetiredMultipleSingleBit);
    h.retired_pages_dbe = count(kRetiredDoubleBit);
  }
  if (int pending = 0; api.retired_pages_pending && api.retired_pages_pending(dev, &pending) == kNvmlSuccess)
    h.retired_pages_pending = pending != 0;
  if (api.remapped_rows) {
    unsigned corr = 0, unc = 0, pending = 0, failure = 0;
    if (api.remapped_rows(dev, &corr, &unc, &pending, &failure) == kNvmlSuccess)
      h.remapped_rows = RemappedRows{corr, unc, pending != 0, failure != 0};
  }
  if (unsigned replays = 0; api.pcie_replay_counter && api.pcie_replay_counter(dev, &replays) == kNvmlSuccess)
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
