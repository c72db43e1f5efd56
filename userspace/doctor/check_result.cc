#include "doctor/check_result.h"

namespace gpunoise::doctor {

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOk: return "ok";
    case Verdict::kWarn: return "warn";
    case Verdict::kFail: return "fail";
    case Verdict::kUnknown: return "unknown";
  }
  return "unknown";
}

Verdict Worse(Verdict a, Verdict b) {
  auto rank = [](Verdict v) {
    switch (v) {
      case Verdict::kUnknown: return 0;
      case Verdict::kOk: return 1;
      case Verdict::kWarn: return 2;
      case Verdict::kFail: return 3;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

CheckResult Unknown(std::string id, std::string reason, std::string why) {
  CheckResult r;
  r.id = std::move(id);
  r.verdict = Verdict::kUnknown;
  r.saw = std::move(reason);
  r.why = std::move(why);
  return r;
}

}  // namespace gpunoise::doctor
