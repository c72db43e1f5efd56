#include "monitor/monitor_privileges.h"

#include "common/privileges.h"

namespace gpunoise::monitor {

CapMask MonitorKeeps(std::vector<std::string>* reasons) {
  if (!KernelKnowsCapability(kCapBpf) || !KernelKnowsCapability(kCapPerfmon)) {
    reasons->push_back("cap_sys_admin: this kernel has no CAP_BPF/CAP_PERFMON (before 5.8); a reload may load "
                       "programs and the sampler opens perf events for CPUs coming online");
    return CapBit(kCapSysAdmin);
  }
  reasons->push_back("cap_bpf: a reload may start the flight recorder or the sampler (programs and maps to load)");
  reasons->push_back("cap_perfmon: the sampler opens perf events for CPUs coming online; tracing programs "
                     "loaded on reload");
  return CapBit(kCapBpf) | CapBit(kCapPerfmon);
}

}  // namespace gpunoise::monitor
