// A process's CPU time and resident memory as the kernel counts them
// (/proc/PID/stat, /proc/PID/status), independent of what the process says
// about itself.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace gpunoise::bench {

double CpuSeconds(pid_t pid);       // utime + stime
uint64_t ResidentBytes(pid_t pid);  // VmRSS

}  // namespace gpunoise::bench
