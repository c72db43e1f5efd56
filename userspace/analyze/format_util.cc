#include "analyze/format_util.h"

#include <fmt/format.h>

#include "common/cpu_list.h"

namespace gpunoise::analyze {

std::string FormatNs(uint64_t ns) {
  // Each unit from where three digits of the one below would round to 1000,
  // so 999.7 ms reads "1 s", not "1e+03 ms"; whole seconds past 999.
  double v = static_cast<double>(ns);
  if (ns >= 999'500'000'000ull) return fmt::format("{:.0f} s", v / 1e9);
  if (ns >= 999'500'000ull) return fmt::format("{:.3g} s", v / 1e9);
  if (ns >= 999'500ull) return fmt::format("{:.3g} ms", v / 1e6);
  if (ns >= 1000ull) return fmt::format("{:.3g} us", v / 1e3);
  return fmt::format("{} ns", ns);
}

std::string FormatShare(double share) {
  if (share > 0 && share < 0.001) return "<0.1%";
  return fmt::format("{:.1f}%", share * 100);
}

std::string JoinCpus(const std::vector<uint32_t>& cpus) { return FormatCpuList(cpus, 3); }

std::string CpuPhrase(const std::vector<uint32_t>& cpus) {
  return (cpus.size() == 1 ? "CPU " : "CPUs ") + JoinCpus(cpus);
}

std::string FormatOffset(uint64_t ts, uint64_t origin) {
  if (ts < origin) return fmt::format("-{:.3f} s", static_cast<double>(origin - ts) / 1e9);
  return fmt::format("+{:.3f} s", static_cast<double>(ts - origin) / 1e9);
}

}  // namespace gpunoise::analyze
