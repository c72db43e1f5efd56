// What one doctor check concluded: a verdict, what it saw, why that matters
// and the command that fixes it. Checks are pure functions that return these.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpunoise::doctor {

// Ordered by severity for ok/warn/fail; kUnknown means "could not judge" and
// does not count towards the exit status unless --strict (docs/doctor.md).
enum class Verdict { kOk = 0, kWarn = 1, kFail = 2, kUnknown = 3 };

std::string_view VerdictName(Verdict v);

struct CheckResult {
  std::string id;       // "irq.placement": family.check, stable for scripts
  Verdict verdict = Verdict::kUnknown;
  std::string saw;      // one line of evidence (or, for unknown, the reason)
  std::string why;      // why it matters for a training node
  std::string fix;      // command(s) that fix it; empty when nothing to do
  std::vector<std::string> details;  // one entry per offending item
};

// The more severe of two verdicts, where unknown ranks below ok.
Verdict Worse(Verdict a, Verdict b);

CheckResult Unknown(std::string id, std::string reason, std::string why);

}  // namespace gpunoise::doctor
