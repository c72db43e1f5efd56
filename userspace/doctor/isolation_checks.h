// CPU isolation and the memory settings that cause stalls: kernel command
// line isolation, kernel threads and daemons allowed on focus CPUs, cpufreq
// governor, deep C-states, automatic NUMA balancing, THP defrag, swap.
#pragma once

#include "doctor/check_result.h"
#include "doctor/doctor_inputs.h"

namespace gpunoise::doctor {

// Idle states whose exit latency exceeds this (µs) count as deep: waking
// from them delays the thread a GPU completion or packet was waiting for.
inline constexpr int64_t kDeepCStateLatencyUs = 10;

CheckResult CheckCmdlineIsolation(const DoctorInputs& in);  // cpu.isolation
CheckResult CheckKernelThreads(const DoctorInputs& in);     // cpu.kthreads
CheckResult CheckDaemons(const DoctorInputs& in);           // cpu.daemons
CheckResult CheckGovernor(const DoctorInputs& in);          // cpu.governor
CheckResult CheckCStates(const DoctorInputs& in);           // cpu.cstates
CheckResult CheckNumaBalancing(const DoctorInputs& in);     // mem.numa_balancing
CheckResult CheckThp(const DoctorInputs& in);               // mem.thp
CheckResult CheckSwap(const DoctorInputs& in);              // mem.swap

// The bracketed choice in a sysfs selector ("always defer [madvise] never").
std::string SelectedChoice(std::string_view text);

}  // namespace gpunoise::doctor
