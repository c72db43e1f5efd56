// The focus CPUs: where the training work runs and interference hurts.
// Given (--focus-cpus), else the CPUs the given processes (--focus PID) may
// run on, else the CPUs that processes using GPUs may run on, else the
// non-housekeeping CPUs (isolcpus, nohz_full). Empty when none of these
// exists; checks that compare against the focus then say "unknown".
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "doctor/kernel_cmdline.h"
#include "doctor/processes.h"

namespace gpunoise::doctor {

enum class FocusSource { kNone, kCpuList, kPids, kGpuProcesses, kIsolatedCpus };

struct Focus {
  std::vector<int> cpus;
  FocusSource source = FocusSource::kNone;
  // The processes whose work the focus protects (given or GPU users); their
  // descendants count as theirs.
  std::vector<int> pids;
  std::string description;  // one line: what the focus is and where it came from

  bool empty() const { return cpus.empty(); }
};

struct FocusRequest {
  std::vector<int> cpus;  // --focus-cpus
  std::vector<int> pids;  // --focus
};

// Fails only for a --focus PID that does not exist (bad input).
Result<Focus> ResolveFocus(const FocusRequest& request, const std::vector<ProcessInfo>& processes,
                           const Isolation& isolation, const std::vector<int>& online_cpus);

std::string_view FocusSourceName(FocusSource source);

// Whether `pid` is one of `roots` or descends from one.
bool DescendsFrom(int pid, const std::vector<int>& roots, const std::vector<ProcessInfo>& processes);

}  // namespace gpunoise::doctor
