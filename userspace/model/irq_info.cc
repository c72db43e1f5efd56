#include "model/irq_info.h"

#include <fmt/format.h>

#include "common/cpu_list.h"

namespace gpunoise::model {
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
                                     : fmt::format("CPUs {}", FormatCpuList(cpus));
  std::string verb = !effective ? "may handle" : cpus.size() == 1 ? "handles" : "handle";
  std::string note = effective ? "" : " (effective affinity unknown)";
  return fmt::format("{} {} {} (IRQ {}){}", who, verb, what, irq.irq, note);
}

}  // namespace gpunoise::model
