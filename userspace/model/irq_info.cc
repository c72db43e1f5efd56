#include "model/irq_info.h"

#include <fmt/format.h>

namespace gpunoise::model {
namespace {

// "0-3,8" (the kernel's cpulist format), without depending on common/.
std::string CpuListText(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string DescribeNicIrq(const IrqInfo& irq) {
  if (irq.device.empty()) return {};
  std::string what;
  if (irq.queue >= 0 && !irq.queue_kind.empty())
    what = fmt::format("{} {} queue {}", irq.device, irq.queue_kind, irq.queue);
  else if (irq.queue >= 0)
    what = fmt::format("{} queue {}", irq.device, irq.queue);
  else
    what = fmt::format("{} ({}{}{})", irq.device, irq.name, irq.queue_kind.empty() ? "" : ", ",
                       irq.queue_kind);
  const bool effective = !irq.effective_affinity.empty();
  const std::vector<int>& cpus = effective ? irq.effective_affinity : irq.affinity;
  if (cpus.empty()) return fmt::format("IRQ {} serves {} (affinity unknown)", irq.irq, what);
  std::string who = cpus.size() == 1 ? fmt::format("CPU {}", cpus[0])
                                     : fmt::format("CPUs {}", CpuListText(cpus));
  std::string verb = !effective ? "may handle" : cpus.size() == 1 ? "handles" : "handle";
  std::string note = effective ? "" : " (effective affinity unknown)";
  return fmt::format("{} {} {} (IRQ {}){}", who, verb, what, irq.irq, note);
}

}  // namespace gpunoise::model
