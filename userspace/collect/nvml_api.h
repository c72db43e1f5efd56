// The NVML functions gpunoise uses (record's counters, doctor's health
// checks), as a table of function pointers:
// NVML is opened with dlopen at run time (no link-time dependency, and a
// node without the NVIDIA driver simply has no GPU counters), and tests
// fill the table with fakes.
//
// Types and constants are NVML's public ABI (nvml.h, which this build does
// not need): every function returns nvmlReturn_t, 0 being NVML_SUCCESS.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace gpunoise::gpu {

using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
inline constexpr NvmlReturn kNvmlSuccess = 0;
inline constexpr NvmlReturn kNvmlErrorInsufficientSize = 7;
inline constexpr unsigned kNvmlClockSm = 1;         // nvmlClockType_t NVML_CLOCK_SM
inline constexpr unsigned kNvmlTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
inline constexpr unsigned kNvmlNameBuffer = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kNvmlUuidBuffer = 96;     // >= NVML_DEVICE_UUID_V2_BUFFER_SIZE

struct NvmlUtilization {  // nvmlUtilization_t, percent
  unsigned int gpu;
  unsigned int memory;
};
struct NvmlPciInfo {  // nvmlPciInfo_t of nvmlDeviceGetPciInfo_v3
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];  // "00000000:3B:00.0"
};
struct NvmlMemory {  // nvmlMemory_t, bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// Clock throttle ("clocks event") reason bits, nvmlClocksThrottleReason*.
inline constexpr uint64_t kThrottleGpuIdle = 0x1;
inline constexpr uint64_t kThrottleApplicationsClocks = 0x2;
inline constexpr uint64_t kThrottleSwPowerCap = 0x4;
inline constexpr uint64_t kThrottleHwSlowdown = 0x8;
inline constexpr uint64_t kThrottleSyncBoost = 0x10;
inline constexpr uint64_t kThrottleSwThermal = 0x20;
inline constexpr uint64_t kThrottleHwThermal = 0x40;
inline constexpr uint64_t kThrottleHwPowerBrake = 0x80;
inline constexpr uint64_t kThrottleDisplayClocks = 0x100;

// "SW power cap, HW thermal slowdown"; idle is left out (it is not a limit).
std::string ThrottleReasonNames(uint64_t reasons);

struct NvmlApi {
  NvmlReturn (*Init)() = nullptr;
  NvmlReturn (*Shutdown)() = nullptr;
  const char* (*ErrorString)(NvmlReturn) = nullptr;
  NvmlReturn (*DeviceGetCount)(unsigned int*) = nullptr;
  NvmlReturn (*DeviceGetHandleByIndex)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*DeviceGetName)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*DeviceGetUUID)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*DeviceGetPciInfo)(NvmlDevice, NvmlPciInfo*) = nullptr;  // optional
  NvmlReturn (*DeviceGetClockInfo)(NvmlDevice, unsigned, unsigned int*) = nullptr;
  NvmlReturn (*DeviceGetUtilizationRates)(NvmlDevice, NvmlUtilization*) = nullptr;
  NvmlReturn (*DeviceGetMemoryInfo)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*DeviceGetTemperature)(NvmlDevice, unsigned, unsigned int*) = nullptr;
  NvmlReturn (*DeviceGetPowerUsage)(NvmlDevice, unsigned int*) = nullptr;  // milliwatts
  NvmlReturn (*DeviceGetThrottleReasons)(NvmlDevice, unsigned long long*) = nullptr;

  // Health (doctor). Optional: older drivers lack some; nullptr then.
  NvmlReturn (*DeviceGetHandleByPciBusId)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*DeviceGetPersistenceMode)(NvmlDevice, int*) = nullptr;
  NvmlReturn (*DeviceGetEccMode)(NvmlDevice, int* current, int* pending) = nullptr;
  // (device, nvmlMemoryErrorType_t, nvmlEccCounterType_t, count)
  NvmlReturn (*DeviceGetTotalEccErrors)(NvmlDevice, int, int, unsigned long long*) = nullptr;
  // (device, nvmlPageRetirementCause_t, page count in/out, addresses or null)
  NvmlReturn (*DeviceGetRetiredPages)(NvmlDevice, int, unsigned*, unsigned long long*) = nullptr;
  NvmlReturn (*DeviceGetRetiredPagesPendingStatus)(NvmlDevice, int*) = nullptr;
  // (device, correctable, uncorrectable, pending, failure)
  NvmlReturn (*DeviceGetRemappedRows)(NvmlDevice, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  NvmlReturn (*DeviceGetPcieReplayCounter)(NvmlDevice, unsigned*) = nullptr;

  std::string Error(NvmlReturn r) const;
};

// dlopen("libnvidia-ml.so.1") and resolve the table. The library handle
// stays open for the life of the process (NVML is not meant to be unloaded).
Result<NvmlApi> LoadNvml(const std::string& path = "libnvidia-ml.so.1");

}  // namespace gpunoise::gpu
