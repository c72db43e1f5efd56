// The kernel command line's CPU isolation parameters (isolcpus, nohz_full,
// rcu_nocbs, irqaffinity) and the idle/frequency overrides doctor reports.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doctor/system_view.h"

namespace gpunoise::doctor {

struct KernelCmdline {
  std::map<std::string, std::string> params;  // "quiet" -> "", "isolcpus" -> "domain,2-7"

  bool Has(const std::string& key) const { return params.count(key) != 0; }
  std::optional<std::string> Get(const std::string& key) const;
  // The CPU list of a parameter, without isolcpus' leading flags
  // ("managed_irq,domain,2-7" -> 2-7). `last_cpu` replaces "N" (the kernel's
  // "last CPU" in lists). nullopt when absent or unparsable.
  std::optional<std::vector<int>> CpuList(const std::string& key, int last_cpu) const;
  // isolcpus' flags ("domain", "managed_irq", "nohz").
  std::vector<std::string> IsolcpusFlags() const;
};

KernelCmdline ParseKernelCmdline(std::string_view text);
std::optional<KernelCmdline> ReadKernelCmdline(const SystemView& view);

// CPUs kept away from the scheduler's load balancing or the tick: isolcpus
// and nohz_full, from sysfs (what the kernel applied) else the command line.
struct Isolation {
  std::vector<int> isolated;   // isolcpus (domain)
  std::vector<int> nohz_full;
  std::vector<int> rcu_nocbs;  // only from the command line
  bool known = false;          // false when neither sysfs nor cmdline was readable
  std::vector<int> NonHousekeeping() const;
};
Isolation ReadIsolation(const SystemView& view, const std::optional<KernelCmdline>& cmdline, int last_cpu);

}  // namespace gpunoise::doctor
