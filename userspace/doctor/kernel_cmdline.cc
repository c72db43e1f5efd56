#include "doctor/kernel_cmdline.h"

#include <cctype>

#include "common/cpu_list.h"
#include "common/strings.h"
#include "doctor/cpu_set.h"
#include "doctor/inventory.h"

namespace gpunoise::doctor {

std::optional<std::string> KernelCmdline::Get(const std::string& key) const {
  auto it = params.find(key);
  if (it == params.end()) return std::nullopt;
  return it->second;
}

std::optional<std::vector<int>> KernelCmdline::CpuList(const std::string& key, int last_cpu) const {
  auto value = Get(key);
  if (!value) return std::nullopt;
  std::string list;
  for (std::string_view part : Split(*value, ',')) {
    part = Trim(part);
    if (part.empty() || !(std::isdigit(static_cast<unsigned char>(part[0])) || part[0] == 'N')) continue;
    if (!list.empty()) list += ',';
    for (char c : part) {
      if (c == 'N') list += std::to_string(last_cpu);
      else list += c;
    }
  }
  if (list.empty()) return std::vector<int>{};
  auto cpus = ParseCpuList(list);
  if (!cpus.ok()) return std::nullopt;
  return std::move(cpus).value();
}

std::vector<std::string> KernelCmdline::IsolcpusFlags() const {
  std::vector<std::string> flags;
  auto value = Get("isolcpus");
  if (!value) return flags;
  for (std::string_view part : Split(*value, ',')) {
    part = Trim(part);
    if (!part.empty() && std::isalpha(static_cast<unsigned char>(part[0])) && part[0] != 'N')
      flags.emplace_back(part);
  }
  return flags;
}

KernelCmdline ParseKernelCmdline(std::string_view text) {
  KernelCmdline c;
  for (std::string_view word : Split(Trim(text), ' ')) {
    if (word.empty()) continue;
    if (word == "--") break;  // what follows goes to init
    auto eq = word.find('=');
    if (eq == std::string_view::npos) c.params[std::string(word)] = "";
    else c.params[std::string(word.substr(0, eq))] = std::string(word.substr(eq + 1));
  }
  return c;
}

std::optional<KernelCmdline> ReadKernelCmdline(const SystemView& view) {
  auto text = view.Read("/proc/cmdline");
  if (!text.ok()) return std::nullopt;
  return ParseKernelCmdline(*text);
}

std::vector<int> Isolation::NonHousekeeping() const { return Union(isolated, nohz_full); }

Isolation ReadIsolation(const SystemView& view, const std::optional<KernelCmdline>& cmdline, int last_cpu) {
  Isolation iso;
  auto isolated = ReadCpuListFile(view, "/sys/devices/system/cpu/isolated");
  auto nohz = ReadCpuListFile(view, "/sys/devices/system/cpu/nohz_full");
  if (cmdline) {
    iso.known = true;
    if (!isolated) isolated = cmdline->CpuList("isolcpus", last_cpu);
    if (!nohz) nohz = cmdline->CpuList("nohz_full", last_cpu);
    iso.rcu_nocbs = cmdline->CpuList("rcu_nocbs", last_cpu).value_or(std::vector<int>{});
  }
  if (isolated) {
    iso.isolated = *isolated;
    iso.known = true;
  }
  if (nohz) {
    iso.nohz_full = *nohz;
    iso.known = true;
  }
  return iso;
}

}  // namespace gpunoise::doctor
