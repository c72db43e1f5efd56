#include "collect/irq_scanner.h"

#include "common/cpu_list.h"
#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {

model::IrqTable ScanIrqs(const std::string& proc_root) {
  model::IrqTable table;
  auto text = ReadFileToString(proc_root + "/interrupts");
  if (!text.ok()) return table;
  auto lines = Split(*text, '\n');
  if (lines.empty()) return table;
  size_t ncpus = 0;
  for (std::string_view tok : Split(Trim(lines[0]), ' '))
    if (StartsWith(tok, "CPU")) ++ncpus;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto irq = ParseInt64(line.substr(0, colon));
    if (!irq) continue;  // NMI, LOC, RES...: system vectors, not numbered IRQs
    // After the per-CPU counts come the chip, the hw irq and the action names.
    std::vector<std::string_view> tokens;
    for (std::string_view tok : Split(line.substr(colon + 1), ' '))
      if (!tok.empty()) tokens.push_back(tok);
    if (tokens.size() <= ncpus) continue;
    model::IrqInfo info;
    info.irq = static_cast<int32_t>(*irq);
    // The action name is the last token; shared lines list several
    // separated by ", ", so take everything after the hw-irq column.
    size_t name_start = std::min(tokens.size() - 1, ncpus + 2);
    std::string name;
    for (size_t t = name_start; t < tokens.size(); ++t) {
      if (!name.empty()) name += ' ';
      name += tokens[t];
    }
    info.name = name;
    std::string dir = proc_root + "/irq/" + std::to_string(*irq);
    if (auto a = ReadFileToString(dir + "/smp_affinity_list"); a.ok())
      if (auto cpus = ParseCpuList(Trim(*a)); cpus.ok()) info.affinity = *cpus;
    if (auto a = ReadFileToString(dir + "/effective_affinity_list"); a.ok())
      if (auto cpus = ParseCpuList(Trim(*a)); cpus.ok()) info.effective_affinity = *cpus;
    table[info.irq] = std::move(info);
  }
  return table;
}

}  // namespace gpunoise::collect
