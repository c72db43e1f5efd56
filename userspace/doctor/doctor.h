// gpunoise doctor: gathers what a node is configured like (DoctorInputs)
// and runs every check over it. The command-line front end is
// tools/gpunoise/doctor_command.cc; docs/doctor.md describes each check.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "doctor/check_result.h"
#include "doctor/doctor_inputs.h"

namespace gpunoise::doctor {

struct DoctorOptions {
  FocusRequest focus;
  uint64_t sample_interval_ns = 1'000'000'000;  // between the two counter samples; 0: one sample
  std::optional<uint64_t> log_since_ns;         // only kernel log records this recent
  std::string nvml_library;                     // empty: do not use NVML
  std::vector<std::string> skip;                // check ids or families ("gpu") to leave out
};

// Where the data that is not in files comes from. Production passes netlink
// and NVML; tests pass fakes, and a sleep that changes the fixture between
// the two samples.
struct DoctorSources {
  EthtoolSource ethtool;  // empty: ethtool parts are unknown
  GpuHealthSource gpu_health;
  std::string gpu_health_unavailable;  // why gpu_health is empty
  std::function<void(uint64_t ns)> sleep;
  int self_pid = 0;
};

// Production sources for `view`: netlink when the view is this node (or an
// interface with the same name and ifindex exists here), NVML from
// options.nvml_library when the inventory has GPUs.
DoctorSources LiveSources(const SystemView& view, const DoctorOptions& options, const Inventory& inventory);

// Reads everything. Fails only for bad input (a --focus PID that does not
// exist); missing data becomes "unknown" in the checks instead.
Result<DoctorInputs> GatherInputs(const SystemView& view, const DoctorOptions& options, DoctorSources sources);
// Same, with LiveSources.
Result<DoctorInputs> GatherInputs(const SystemView& view, const DoctorOptions& options);

Sample TakeSample(const SystemView& view, const Inventory& inventory, const GpuHealthSource& gpu_health);

// Every check, in report order, minus the skipped ones.
std::vector<CheckResult> RunChecks(const DoctorInputs& inputs, const std::vector<std::string>& skip = {});

// The ids of every check in report order (for --skip validation and docs).
const std::vector<std::string>& CheckIds();

// Exit status conventions (docs/doctor.md):
//  kStatus: 0 all ok, 1 worst is warn, 2 worst is fail (the default);
//  kNpd: node-problem-detector's 0 ok, 1 problem (verdict at or above
//        `problem_at`), 2 unknown (only with strict, when nothing was a
//        problem but something could not be judged).
// kUnknown never counts unless `strict`, where it counts as a warning
// (kStatus) or as NPD's unknown (kNpd).
enum class ExitCodeStyle { kStatus, kNpd };
struct ExitPolicy {
  ExitCodeStyle style = ExitCodeStyle::kStatus;
  Verdict problem_at = Verdict::kFail;  // kNpd only: kWarn or kFail
  bool strict = false;
};
int ExitCode(const std::vector<CheckResult>& results, const ExitPolicy& policy);
Verdict WorstVerdict(const std::vector<CheckResult>& results);

}  // namespace gpunoise::doctor
