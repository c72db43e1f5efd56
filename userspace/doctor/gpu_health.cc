#include "doctor/gpu_health.h"

#include <cstdio>

namespace gpunoise::doctor {

std::string ThrottleReasonNames(uint64_t mask) {
  struct Bit {
    uint64_t bit;
    const char* name;
  };
  static constexpr Bit kBits[] = {
      {kThrottleGpuIdle, "gpu_idle"},
      {kThrottleApplicationsClocks, "applications_clocks_setting"},
      {kThrottleSwPowerCap, "sw_power_cap"},
      {kThrottleHwSlowdown, "hw_slowdown"},
      {kThrottleSyncBoost, "sync_boost"},
      {kThrottleSwThermal, "sw_thermal_slowdown"},
      {kThrottleHwThermal, "hw_thermal_slowdown"},
      {kThrottleHwPowerBrake, "hw_power_brake_slowdown"},
      {kThrottleDisplayClocks, "display_clock_setting"},
  };
  std::string out;
  uint64_t known = 0;
  for (const auto& b : kBits) {
    known |= b.bit;
    if (!(mask & b.bit)) continue;
    if (!out.empty()) out += ',';
    out += b.name;
  }
  if (mask & ~known) {
    if (!out.empty()) out += ',';
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(mask & ~known));
    out += buf;
  }
  return out.empty() ? "none" : out;
}

}  // namespace gpunoise::doctor
