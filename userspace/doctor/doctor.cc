#include "doctor/doctor.h"

#include <net/if.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "common/strings.h"
#include "doctor/ethtool_netlink.h"
#include "doctor/gpu_checks.h"
#include "doctor/irq_checks.h"
#include "doctor/isolation_checks.h"
#include "doctor/crash_checks.h"
#include "doctor/kernel_checks.h"
#include "doctor/locality_checks.h"
#include "doctor/nic_checks.h"
#include "doctor/nvml_library.h"

namespace gpunoise::doctor {
namespace {

using CheckFn = CheckResult (*)(const DoctorInputs&);

CheckResult FocusLine(const DoctorInputs& in) {
  CheckResult r;
  r.id = "focus";
  r.verdict = in.focus.empty() ? Verdict::kUnknown : Verdict::kOk;
  r.saw = in.focus.description;
  r.why = "the CPUs the training work runs on: the checks below keep interference away from them";
  return r;
}

struct Check {
  const char* id;
  CheckFn fn;
};

const std::vector<Check>& Checks() {
  static const std::vector<Check> kChecks = {
      {"focus", FocusLine},
      {"irq.placement", CheckIrqPlacement},
      {"irq.irqbalance", CheckIrqBalance},
      {"irq.steering", CheckPacketSteering},
      {"locality.devices", CheckDeviceLocality},
      {"locality.processes", CheckProcessLocality},
      {"cpu.isolation", CheckCmdlineIsolation},
      {"cpu.kthreads", CheckKernelThreads},
      {"cpu.daemons", CheckDaemons},
      {"cpu.governor", CheckGovernor},
      {"cpu.cstates", CheckCStates},
      {"mem.numa_balancing", CheckNumaBalancing},
      {"mem.thp", CheckThp},
      {"mem.swap", CheckSwap},
      {"nic.link", CheckNicLink},
      {"pcie.link", CheckPcieLink},
      {"nic.tx_timeout", CheckTxTimeouts},
      {"nic.errors", CheckNicErrors},
      {"nic.mtu", CheckMtu},
      {"nic.rings", CheckRings},
      {"nic.coalesce", CheckCoalesce},
      {"kernel.counters", CheckKernelCounters},
      {"kernel.hung_tasks", CheckHungTasks},
      {"kernel.log", CheckKernelLog},
      {"kernel.panic", CheckPanicSettings},
      {"kernel.evidence", CheckCrashEvidence},
      {"kernel.blackbox", CheckBlackBox},
      {"gpu.persistence", CheckPersistence},
      {"gpu.throttle", CheckThrottle},
      {"gpu.ecc", CheckEcc},
      {"gpu.pcie_replay", CheckPcieReplay},
  };
  return kChecks;
}

bool Skipped(const std::string& id, const std::vector<std::string>& skip) {
  for (const auto& s : skip)
    if (id == s || StartsWith(id, s + ".")) return true;
  return false;
}

// Whether netlink in this process describes the interface the view shows:
// the same name with the same ifindex in our network namespace.
bool SameInterfaceHere(const NetInterface& nic) {
  unsigned index = if_nametoindex(nic.name.c_str());
  return index != 0 && static_cast<int>(index) == nic.ifindex;
}

}  // namespace

const std::vector<std::string>& CheckIds() {
  static const std::vector<std::string> kIds = [] {
    std::vector<std::string> ids;
    for (const auto& c : Checks()) ids.emplace_back(c.id);
    return ids;
  }();
  return kIds;
}

DoctorSources LiveSources(const SystemView& view, const DoctorOptions& options, const Inventory& inventory) {
  DoctorSources s;
  s.sleep = [](uint64_t ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); };
  if (view.IsLive()) s.self_pid = static_cast<int>(::getpid());
  if (!inventory.PhysicalNics().empty()) {
    EthtoolSource netlink = MakeNetlinkEthtoolSource();
    if (view.IsLive()) {
      s.ethtool = netlink;
    } else {
      // Netlink answers for this network namespace: only trust it for an
      // interface of the viewed system that is also here (a container with
      // the host's network, looking at the host's /sys through --root).
      std::map<std::string, bool> here;
      for (const NetInterface* nic : inventory.PhysicalNics()) here[nic->name] = SameInterfaceHere(*nic);
      s.ethtool = [netlink, here](const std::string& ifname) {
        auto it = here.find(ifname);
        if (it != here.end() && it->second) return netlink(ifname);
        EthtoolInfo info;
        std::string why = "ethtool data comes over netlink from this network namespace, which does not have " +
                          ifname + " of --root";
        info.rings = Error{why};
        info.coalesce = Error{why};
        info.link_modes = Error{why};
        return info;
      };
    }
  }
  if (inventory.OfKind(PciKind::kGpu).empty()) return s;
  if (options.nvml_library.empty()) {
    s.gpu_health_unavailable = "NVML disabled (--nvml none)";
    return s;
  }
  NvmlAccess nvml = OpenNvml(options.nvml_library);
  s.gpu_health = nvml.query;
  s.gpu_health_unavailable = nvml.unavailable_reason;
  return s;
}

Sample TakeSample(const SystemView& view, const Inventory& inventory, const GpuHealthSource& gpu_health) {
  Sample s;
  for (const NetInterface* nic : inventory.PhysicalNics()) {
    std::string dir = "/sys/class/net/" + nic->name;
    auto& stats = s.nic_stats[nic->name];
    for (const auto& counter : WatchedNicCounters())
      if (auto v = view.ReadInt(dir + "/statistics/" + counter); v && *v >= 0) stats[counter] = static_cast<uint64_t>(*v);
    auto& timeouts = s.tx_timeouts[nic->name];
    for (const auto& q : nic->tx_queues)
      if (auto v = view.ReadInt(dir + "/queues/" + q + "/tx_timeout"); v && *v >= 0)
        timeouts[q] = static_cast<uint64_t>(*v);
  }
  for (const auto& name : KernelCounterNames())
    if (auto v = view.ReadInt("/sys/kernel/" + name); v && *v >= 0) s.kernel_counters[name] = static_cast<uint64_t>(*v);
  if (gpu_health)
    for (const PciDevice* gpu : inventory.OfKind(PciKind::kGpu)) s.gpus.emplace(gpu->bdf, gpu_health(gpu->bdf));
  return s;
}

Result<DoctorInputs> GatherInputs(const SystemView& view, const DoctorOptions& options, DoctorSources sources) {
  DoctorInputs in;
  in.view = &view;
  in.inventory = ReadInventory(view);
  in.processes = ReadProcesses(view);
  // doctor's own NVML session holds /dev/nvidia* by now: not a GPU workload.
  for (auto& p : in.processes)
    if (sources.self_pid && p.pid == sources.self_pid) p.nvidia_files.clear();
  in.cmdline = ReadKernelCmdline(view);
  int last_cpu = in.inventory.online_cpus.empty() ? 0 : in.inventory.online_cpus.back();
  in.isolation = ReadIsolation(view, in.cmdline, last_cpu);
  GN_ASSIGN_OR_RETURN(in.focus, ResolveFocus(options.focus, in.processes, in.isolation, in.inventory.online_cpus));
  in.self_pid = sources.self_pid;

  if (sources.ethtool) {
    for (const NetInterface* nic : in.inventory.PhysicalNics()) in.ethtool.emplace(nic->name, sources.ethtool(nic->name));
  } else {
    in.ethtool_unavailable = "no ethtool source";
  }

  if (!in.inventory.OfKind(PciKind::kGpu).empty() && !sources.gpu_health)
    in.nvml_unavailable = sources.gpu_health_unavailable.empty() ? "NVML unavailable" : sources.gpu_health_unavailable;

  in.sample_interval_ns = options.sample_interval_ns;
  in.samples.push_back(TakeSample(view, in.inventory, sources.gpu_health));
  if (options.sample_interval_ns > 0) {
    if (sources.sleep) sources.sleep(options.sample_interval_ns);
    in.samples.push_back(TakeSample(view, in.inventory, sources.gpu_health));
  }

  in.kernel_log = view.ReadKernelLog();
  if (auto uptime = view.ReadTrimmed("/proc/uptime")) {
    char* end = nullptr;
    double s = std::strtod(uptime->c_str(), &end);
    if (end != uptime->c_str()) in.uptime_s = s;
  }
  in.log_since_ns = options.log_since_ns;
  return in;
}

Result<DoctorInputs> GatherInputs(const SystemView& view, const DoctorOptions& options) {
  Inventory inventory = ReadInventory(view);
  return GatherInputs(view, options, LiveSources(view, options, inventory));
}

std::vector<CheckResult> RunChecks(const DoctorInputs& inputs, const std::vector<std::string>& skip) {
  std::vector<CheckResult> results;
  for (const auto& c : Checks()) {
    if (Skipped(c.id, skip)) continue;
    results.push_back(c.fn(inputs));
  }
  return results;
}

Verdict WorstVerdict(const std::vector<CheckResult>& results) {
  Verdict worst = Verdict::kUnknown;
  for (const auto& r : results) worst = Worse(worst, r.verdict);
  return worst;
}

int ExitCode(const std::vector<CheckResult>& results, const ExitPolicy& policy) {
  bool any_unknown = false;
  Verdict worst = Verdict::kOk;
  for (const auto& r : results) {
    if (r.verdict == Verdict::kUnknown) any_unknown = true;
    else worst = Worse(worst, r.verdict);
  }
  if (policy.style == ExitCodeStyle::kNpd) {
    if (worst == Verdict::kFail || (worst == Verdict::kWarn && policy.problem_at == Verdict::kWarn)) return 1;
    return policy.strict && any_unknown ? 2 : 0;
  }
  if (worst == Verdict::kFail) return 2;
  if (worst == Verdict::kWarn || (policy.strict && any_unknown)) return 1;
  return 0;
}

}  // namespace gpunoise::doctor
