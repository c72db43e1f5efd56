#include "collect/nvml_api.h"

#include <dlfcn.h>

#include <fmt/format.h>

namespace gpunoise::gpu {

std::string ThrottleReasonNames(uint64_t reasons) {
  static constexpr std::pair<uint64_t, const char*> kNames[] = {
      {kThrottleApplicationsClocks, "applications clocks setting"},
      {kThrottleSwPowerCap, "SW power cap"},
      {kThrottleHwSlowdown, "HW slowdown"},
      {kThrottleSyncBoost, "sync boost"},
      {kThrottleSwThermal, "SW thermal slowdown"},
      {kThrottleHwThermal, "HW thermal slowdown"},
      {kThrottleHwPowerBrake, "HW power brake"},
      {kThrottleDisplayClocks, "display clocks setting"},
  };
  std::string out;
  uint64_t known = kThrottleGpuIdle;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (reasons & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  }
  if (reasons & ~known) out += fmt::format("{}other (0x{:x})", out.empty() ? "" : ", ", reasons & ~known);
  return out;
}

std::string NvmlApi::Error(NvmlReturn r) const {
  const char* text = ErrorString ? ErrorString(r) : nullptr;
  return text ? text : fmt::format("NVML error {}", r);
}

namespace {
template <typename Fn>
void Bind(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(::dlsym(handle, name));
}
}  // namespace

Result<NvmlApi> LoadNvml(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    return MakeError("{}", e ? e : path + " not found");
  }
  NvmlApi api;
  Bind(handle, "nvmlInit_v2", &api.Init);
  Bind(handle, "nvmlShutdown", &api.Shutdown);
  Bind(handle, "nvmlErrorString", &api.ErrorString);
  Bind(handle, "nvmlDeviceGetCount_v2", &api.DeviceGetCount);
  Bind(handle, "nvmlDeviceGetHandleByIndex_v2", &api.DeviceGetHandleByIndex);
  Bind(handle, "nvmlDeviceGetName", &api.DeviceGetName);
  Bind(handle, "nvmlDeviceGetUUID", &api.DeviceGetUUID);
  Bind(handle, "nvmlDeviceGetPciInfo_v3", &api.DeviceGetPciInfo);
  Bind(handle, "nvmlDeviceGetClockInfo", &api.DeviceGetClockInfo);
  Bind(handle, "nvmlDeviceGetUtilizationRates", &api.DeviceGetUtilizationRates);
  Bind(handle, "nvmlDeviceGetMemoryInfo", &api.DeviceGetMemoryInfo);
  Bind(handle, "nvmlDeviceGetTemperature", &api.DeviceGetTemperature);
  Bind(handle, "nvmlDeviceGetPowerUsage", &api.DeviceGetPowerUsage);
  // Renamed "clocks event reasons" in newer drivers; the old name remains.
  Bind(handle, "nvmlDeviceGetCurrentClocksEventReasons", &api.DeviceGetThrottleReasons);
  if (!api.DeviceGetThrottleReasons)
    Bind(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", &api.DeviceGetThrottleReasons);
  Bind(handle, "nvmlDeviceGetHandleByPciBusId_v2", &api.DeviceGetHandleByPciBusId);
  if (!api.DeviceGetHandleByPciBusId)
    Bind(handle, "nvmlDeviceGetHandleByPciBusId", &api.DeviceGetHandleByPciBusId);
  Bind(handle, "nvmlDeviceGetPersistenceMode", &api.DeviceGetPersistenceMode);
  Bind(handle, "nvmlDeviceGetEccMode", &api.DeviceGetEccMode);
  Bind(handle, "nvmlDeviceGetTotalEccErrors", &api.DeviceGetTotalEccErrors);
  Bind(handle, "nvmlDeviceGetRetiredPages", &api.DeviceGetRetiredPages);
  Bind(handle, "nvmlDeviceGetRetiredPagesPendingStatus", &api.DeviceGetRetiredPagesPendingStatus);
  Bind(handle, "nvmlDeviceGetRemappedRows", &api.DeviceGetRemappedRows);
  Bind(handle, "nvmlDeviceGetPcieReplayCounter", &api.DeviceGetPcieReplayCounter);
  if (!api.Init) Bind(handle, "nvmlInit", &api.Init);
  // Each user checks the optional entries it needs; these every user needs.
  if (!api.Init || !api.Shutdown) return MakeError("{} is missing nvmlInit/nvmlShutdown", path);
  return api;
}

}  // namespace gpunoise::gpu
