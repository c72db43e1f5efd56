// gpunoise's one clock is CLOCK_BOOTTIME (DESIGN.md decision 1): the eBPF
// side uses bpf_ktime_get_boot_ns(), the CUPTI side registers it as its
// timestamp source, and Perfetto's default trace clock is the same.
#pragma once

#include <time.h>

#include <cstdint>

namespace gpunoise {

inline uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
inline uint64_t BoottimeNs() { return ClockNs(CLOCK_BOOTTIME); }
inline uint64_t MonotonicNs() { return ClockNs(CLOCK_MONOTONIC); }
inline uint64_t RealtimeNs() { return ClockNs(CLOCK_REALTIME); }

}  // namespace gpunoise
