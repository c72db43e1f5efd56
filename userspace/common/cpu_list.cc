#include "common/cpu_list.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise {
namespace {

bool ParseInt(std::string_view s, int& out) {
  s = Trim(s);
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && out >= 0;
}

std::vector<int> FromSysfs(const char* path) {
  auto text = ReadFileToString(path);
  if (text.ok()) {
    auto cpus = ParseCpuList(Trim(*text));
    if (cpus.ok() && !cpus->empty()) return *cpus;
  }
  std::vector<int> fallback;
  unsigned n = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < n; ++i) fallback.push_back(static_cast<int>(i));
  return fallback;
}

}  // namespace

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  if (Trim(text).empty()) return MakeError("empty CPU list");
  for (std::string_view part : Split(text, ',')) {
    part = Trim(part);
    auto dash = part.find('-');
    int first = 0, last = 0;
    if (dash == std::string_view::npos) {
      if (!ParseInt(part, first)) return MakeError("invalid CPU list item '{}'", part);
      last = first;
    } else if (!ParseInt(part.substr(0, dash), first) ||
               !ParseInt(part.substr(dash + 1), last) || last < first) {
      return MakeError("invalid CPU range '{}'", part);
    }
    if (last >= 65536) return MakeError("CPU number out of range in '{}'", part);
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

template <typename Cpu>
std::string FormatCpuList(const std::vector<Cpu>& cpus, size_t min_run) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    // In 64 bits: the successor of INT_MAX or UINT32_MAX must not overflow.
    while (j + 1 < cpus.size() && static_cast<int64_t>(cpus[j + 1]) == static_cast<int64_t>(cpus[j]) + 1) ++j;
    if (!out.empty()) out += ',';
    if (j - i + 1 >= std::max<size_t>(min_run, 2)) {
      out += std::to_string(cpus[i]) + '-' + std::to_string(cpus[j]);
    } else {
      for (size_t k = i; k <= j; ++k) out += (k == i ? "" : ",") + std::to_string(cpus[k]);
    }
    i = j + 1;
  }
  return out;
}
template std::string FormatCpuList<int>(const std::vector<int>&, size_t);
template std::string FormatCpuList<uint32_t>(const std::vector<uint32_t>&, size_t);

Result<std::vector<int>> ParseCpuMask(std::string_view text) {
  std::string hex;
  for (char c : Trim(text))
    if (c != ',') hex.push_back(c);
  if (hex.empty()) return MakeError("empty CPU mask");
  std::vector<int> cpus;
  int bit = 0;
  for (auto it = hex.rbegin(); it != hex.rend(); ++it) {
    int nibble;
    char c = *it;
    if (c >= '0' && c <= '9') nibble = c - '0';
    else if (c >= 'a' && c <= 'f') nibble = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') nibble = c - 'A' + 10;
    else return MakeError("invalid CPU mask '{}'", text);
    for (int b = 0; b < 4; ++b)
      if (nibble & (1 << b)) cpus.push_back(bit + b);
    bit += 4;
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

std::vector<int> PossibleCpus() { return FromSysfs("/sys/devices/system/cpu/possible"); }
std::vector<int> OnlineCpus() { return FromSysfs("/sys/devices/system/cpu/online"); }

}  // namespace gpunoise
