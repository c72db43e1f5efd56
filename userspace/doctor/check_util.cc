#include "doctor/check_util.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/cpu_list.h"
#include "doctor/cpu_set.h"

namespace gpunoise::doctor {

std::vector<int> DoctorInputs::Housekeeping() const {
  return Subtract(inventory.online_cpus, focus.cpus);
}

std::string JoinLimited(const std::vector<std::string>& items, size_t limit) {
  std::string out;
  size_t shown = std::min(limit, items.size());
  for (size_t i = 0; i < shown; ++i) {
    if (i) out += i + 1 == shown && shown == items.size() ? " and " : ", ";
    out += items[i];
  }
  if (items.size() > shown) out += fmt::format(" and {} more", items.size() - shown);
  return out;
}

std::string JoinCommands(const std::vector<std::string>& commands, size_t limit) {
  std::vector<std::string> unique;
  for (const auto& c : commands)
    if (std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(c);
  std::string out;
  for (size_t i = 0; i < unique.size() && i < limit; ++i) out += (i ? "; " : "") + unique[i];
  if (unique.size() > limit) out += fmt::format(" (and {} more like these)", unique.size() - limit);
  return out;
}

std::string CpuListText(const std::vector<int>& cpus) { return cpus.empty() ? "none" : FormatCpuList(cpus); }

std::string HousekeepingOrPinFirst(const DoctorInputs& in) {
  std::vector<int> hk = in.Housekeeping();
  if (hk.empty())
    return "the focus covers every CPU: first pin the training processes to part of them "
           "(taskset/numactl, or srun --cpu-bind), then";
  return fmt::format("housekeeping CPUs are {}:", FormatCpuList(hk));
}

Verdict WorstOf(const std::vector<Verdict>& verdicts) {
  Verdict worst = Verdict::kUnknown;
  for (Verdict v : verdicts) worst = Worse(worst, v);
  return worst;
}

std::string CpuMaskText(const std::vector<int>& cpus) {
  if (cpus.empty()) return "0";
  int max_cpu = cpus.back();
  std::vector<uint32_t> words(static_cast<size_t>(max_cpu / 32 + 1), 0);
  for (int c : cpus) words[static_cast<size_t>(c / 32)] |= 1u << (c % 32);
  std::string out = fmt::format("{:x}", words.back());
  for (size_t i = words.size() - 1; i-- > 0;) out += fmt::format(",{:08x}", words[i]);
  return out;
}

std::vector<const NetInterface*> PhysicalNics(const DoctorInputs& in) { return in.inventory.PhysicalNics(); }

}  // namespace gpunoise::doctor
