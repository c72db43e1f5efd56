#include "doctor/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "common/cpu_list.h"
#include "doctor/focus.h"

namespace gpunoise::doctor {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k)
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  if (len == 2 && c < 0xc2) return 0;  // overlong
  return len;
}

std::map<Verdict, size_t> Counts(const std::vector<CheckResult>& results) {
  std::map<Verdict, size_t> counts{{Verdict::kOk, 0}, {Verdict::kWarn, 0}, {Verdict::kFail, 0}, {Verdict::kUnknown, 0}};
  for (const auto& r : results) ++counts[r.verdict];
  return counts;
}

std::string CountsText(const std::vector<CheckResult>& results) {
  auto c = Counts(results);
  return fmt::format("{} fail, {} warn, {} ok, {} unknown", c[Verdict::kFail], c[Verdict::kWarn], c[Verdict::kOk],
                     c[Verdict::kUnknown]);
}

}  // namespace

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(s.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string FormatText(const std::vector<CheckResult>& results, const ReportContext& ctx, bool verbose) {
  std::string out = fmt::format("gpunoise doctor: {} (kernel {}, root {})\n", ctx.host, ctx.kernel, ctx.root);
  size_t width = 0;
  for (const auto& r : results) width = std::max(width, r.id.size());
  for (const auto& r : results) {
    out += fmt::format("{:<8} {:<{}}  {}", VerdictName(r.verdict), r.id, width, r.saw);
    if (r.verdict == Verdict::kWarn || r.verdict == Verdict::kFail) {
      out += fmt::format(" | why: {}", r.why);
      if (!r.fix.empty()) out += fmt::format(" | fix: {}", r.fix);
    }
    out += '\n';
    if (verbose)
      for (const auto& d : r.details) out += fmt::format("{:<8} {:<{}}    - {}\n", "", "", width, d);
  }
  out += fmt::format("summary: {} (exit {})\n", FormatSummary(results), ctx.exit_code);
  return out;
}

std::string FormatJson(const std::vector<CheckResult>& results, const ReportContext& ctx) {
  std::string out = "{\n";
  out += "  \"schema\": \"gpunoise.doctor/1\",\n";
  out += fmt::format("  \"host\": {},\n", JsonString(ctx.host));
  out += fmt::format("  \"kernel\": {},\n", JsonString(ctx.kernel));
  out += fmt::format("  \"root\": {},\n", JsonString(ctx.root));
  if (ctx.focus) {
    std::vector<std::string> pids;
    for (int p : ctx.focus->pids) pids.push_back(std::to_string(p));
    out += fmt::format("  \"focus\": {{\"cpus\": {}, \"source\": {}, \"pids\": [{}], \"description\": {}}},\n",
                       JsonString(FormatCpuList(ctx.focus->cpus)), JsonString(FocusSourceName(ctx.focus->source)),
                       fmt::join(pids, ", "), JsonString(ctx.focus->description));
  }
  out += fmt::format("  \"sample_interval_ms\": {},\n", ctx.sample_interval_ns / 1'000'000);
  out += "  \"checks\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::vector<std::string> details;
    for (const auto& d : r.details) details.push_back(JsonString(d));
    out += fmt::format(
        "    {{\"id\": {}, \"verdict\": {}, \"saw\": {}, \"why\": {}, \"fix\": {}, \"details\": [{}]}}{}\n",
        JsonString(r.id), JsonString(VerdictName(r.verdict)), JsonString(r.saw), JsonString(r.why), JsonString(r.fix),
        fmt::join(details, ", "), i + 1 < results.size() ? "," : "");
  }
  out += "  ],\n";
  auto c = Counts(results);
  out += fmt::format("  \"counts\": {{\"ok\": {}, \"warn\": {}, \"fail\": {}, \"unknown\": {}}},\n", c[Verdict::kOk],
                     c[Verdict::kWarn], c[Verdict::kFail], c[Verdict::kUnknown]);
  Verdict worst = Verdict::kUnknown;
  for (const auto& r : results) worst = Worse(worst, r.verdict);
  out += fmt::format("  \"worst\": {},\n", JsonString(VerdictName(worst)));
  out += fmt::format("  \"summary\": {},\n", JsonString(FormatSummary(results)));
  out += fmt::format("  \"exit_code\": {}\n", ctx.exit_code);
  out += "}\n";
  return out;
}

std::string FormatSummary(const std::vector<CheckResult>& results) {
  std::vector<std::string> fails, warns;
  for (const auto& r : results) {
    if (r.verdict == Verdict::kFail) fails.push_back(r.id);
    if (r.verdict == Verdict::kWarn) warns.push_back(r.id);
  }
  std::string out;
  if (!fails.empty()) out += fmt::format("fail: {}", fmt::join(fails, ", "));
  if (!warns.empty()) out += fmt::format("{}warn: {}", out.empty() ? "" : "; ", fmt::join(warns, ", "));
  if (out.empty()) out = "ok";
  return out + fmt::format(" ({})", CountsText(results));
}

}  // namespace gpunoise::doctor
