// Doctor's output: text (one line per check), JSON (schema in
// docs/doctor.md, "gpunoise.doctor/1") and a one-line summary for scheduler
// hooks (SLURM drain reasons, node-problem-detector condition messages).
#pragma once

#include <string>
#include <vector>

#include "doctor/check_result.h"
#include "doctor/doctor_inputs.h"

namespace gpunoise::doctor {

struct ReportContext {
  std::string host;
  std::string root;
  std::string kernel;  // uname -r of the viewed system (or of this one when live)
  const Focus* focus = nullptr;
  uint64_t sample_interval_ns = 0;
  int exit_code = 0;
};

// `verbose` adds each check's details as indented lines below it.
std::string FormatText(const std::vector<CheckResult>& results, const ReportContext& ctx, bool verbose);
std::string FormatJson(const std::vector<CheckResult>& results, const ReportContext& ctx);
// "fail: kernel.counters, gpu.ecc; warn: irq.placement (2 fail, 1 warn, 20 ok, 5 unknown)"
std::string FormatSummary(const std::vector<CheckResult>& results);

// A JSON string literal; invalid UTF-8 becomes U+FFFD.
std::string JsonString(std::string_view s);

}  // namespace gpunoise::doctor
