#include "collect/proc_softirqs.h"

#include <string>
#include <vector>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {

Result<KernelSoftirqCounts> ParseProcSoftirqs(std::string_view text) {
  std::vector<std::string_view> lines = Split(text, '\n');
  if (lines.empty()) return MakeError("/proc/softirqs is empty");
  // The header names the online CPUs' columns: "CPU0 CPU1 CPU4 ...".
  std::vector<uint32_t> cpus;
  for (std::string_view f : SplitWhitespace(lines[0])) {
    std::optional<uint64_t> n = StartsWith(f, "CPU") ? ParseUint64(f.substr(3)) : std::nullopt;
    if (!n || *n > UINT32_MAX) return MakeError("/proc/softirqs: unexpected column '{}'", f);
    cpus.push_back(static_cast<uint32_t>(*n));
  }
  if (cpus.empty()) return MakeError("/proc/softirqs names no CPU");
  KernelSoftirqCounts out;
  for (uint32_t cpu : cpus) out[cpu] = {};
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string_view> f = SplitWhitespace(lines[i]);
    if (f.empty()) continue;
    if (f[0].size() < 2 || f[0].back() != ':') return MakeError("/proc/softirqs: unexpected row '{}'", Trim(lines[i]));
    std::optional<uint32_t> vec = model::SoftirqVecNamed(f[0].substr(0, f[0].size() - 1));
    if (!vec) continue;
    if (f.size() != cpus.size() + 1)
      return MakeError("/proc/softirqs: row {} has {} counts for {} CPUs", f[0], f.size() - 1, cpus.size());
    for (size_t c = 0; c < cpus.size(); ++c) {
      std::optional<uint64_t> n = ParseUint64(f[c + 1]);
      if (!n) return MakeError("/proc/softirqs: row {}: '{}' is not a count", f[0], f[c + 1]);
      out[cpus[c]][*vec] = *n;
    }
  }
  return out;
}

Result<KernelSoftirqCounts> ReadProcSoftirqs() {
  GN_ASSIGN_OR_RETURN(std::string text, ReadFileToString("/proc/softirqs"));
  return ParseProcSoftirqs(text);
}

}  // namespace gpunoise::collect
