#include "doctor/isolation_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "common/cpu_list.h"
#include "common/strings.h"
#include "doctor/check_util.h"
#include "doctor/cpu_set.h"

namespace gpunoise::doctor {
namespace {

// The CPUs a per-CPU check looks at: the focus, else every online CPU.
std::vector<int> CpusToCheck(const DoctorInputs& in, std::string* scope) {
  if (!in.focus.empty()) {
    *scope = "focus CPUs";
    return in.focus.cpus;
  }
  *scope = "all CPUs (no focus)";
  return in.inventory.online_cpus;
}

// Groups kernel threads that differ only by instance or current work:
// "kworker/u8:3-events_unbound" -> "kworker/u*", "kworker/R-kblockd" ->
// "kworker/R-* (rescuers)", "rcuop/12" -> "rcuop/*".
std::string KthreadFamily(const std::string& comm) {
  if (StartsWith(comm, "kworker/R-")) return "kworker/R-* (workqueue rescuers)";
  if (StartsWith(comm, "kworker/u")) return "kworker/u* (unbound workqueues)";
  std::string out;
  bool in_digits = false;
  for (char c : comm) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (!in_digits) out += '*';
      in_digits = true;
    } else {
      out += c;
      in_digits = false;
    }
  }
  return out;
}

}  // namespace

std::string SelectedChoice(std::string_view text) {
  auto open = text.find('[');
  auto close = text.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return std::string(Trim(text));
  return std::string(text.substr(open + 1, close - open - 1));
}

CheckResult CheckCmdlineIsolation(const DoctorInputs& in) {
  const std::string id = "cpu.isolation";
  const char* why =
      "without nohz_full the scheduler tick interrupts every focus CPU up to 1000 times a second, and without "
      "rcu_nocbs RCU callbacks run there; isolcpus also removes CPUs from load balancing (only for pinned threads)";
  if (!in.cmdline) return Unknown(id, "/proc/cmdline unreadable", why);
  const KernelCmdline& c = *in.cmdline;
  std::vector<std::string> present;
  for (const char* key : {"isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity", "rcu_nocb_poll"})
    if (auto v = c.Get(key)) present.push_back(v->empty() ? key : fmt::format("{}={}", key, *v));
  std::string seen = present.empty() ? "no isolcpus, nohz_full or rcu_nocbs on the kernel command line"
                                     : fmt::format("kernel command line: {}", fmt::join(present, " "));
  if (in.focus.empty()) return Unknown(id, seen + "; no focus CPUs to compare against", why);

  CheckResult r;
  r.id = id;
  r.why = why;
  // nohz_full CPUs get their RCU callbacks offloaded too (kernel/rcu/tree_nocb.h).
  std::vector<int> nocb = Union(in.isolation.rcu_nocbs, in.isolation.nohz_full);
  std::vector<int> no_tick = Subtract(in.focus.cpus, in.isolation.nohz_full);
  std::vector<int> no_nocb = Subtract(in.focus.cpus, nocb);
  if (no_tick.empty() && no_nocb.empty()) {
    r.verdict = Verdict::kOk;
    r.saw = fmt::format("focus CPUs {} are nohz_full and RCU-offloaded; {}", CpuListText(in.focus.cpus), seen);
    return r;
  }
  r.verdict = Verdict::kWarn;
  std::vector<std::string> gaps;
  if (!no_tick.empty()) gaps.push_back(fmt::format("CPUs {} keep the tick (not nohz_full)", CpuListText(no_tick)));
  if (!no_nocb.empty()) gaps.push_back(fmt::format("CPUs {} run RCU callbacks (not rcu_nocbs)", CpuListText(no_nocb)));
  r.saw = fmt::format("focus CPUs {}: {}; {}", CpuListText(in.focus.cpus), fmt::join(gaps, ", "), seen);
  std::vector<int> hk = in.Housekeeping();
  r.fix = hk.empty()
              ? HousekeepingOrPinFirst(in) + " boot with nohz_full=<training CPUs> rcu_nocbs=<training CPUs>"
              : fmt::format("add 'nohz_full={0} rcu_nocbs={0} irqaffinity={1}' to GRUB_CMDLINE_LINUX, "
                            "update-grub, reboot",
                            FormatCpuList(in.focus.cpus), FormatCpuList(hk));
  return r;
}

CheckResult CheckKernelThreads(const DoctorInputs& in) {
  const std::string id = "cpu.kthreads";
  const char* why =
      "unbound kernel threads (unbound kworkers, RCU grace-period and offload threads, kswapd, kcompactd) "
      "are scheduled anywhere they are allowed and preempt the training thread on its CPU";
  if (in.focus.empty()) return Unknown(id, "no focus CPUs: " + in.focus.description, why);
  if (in.processes.empty()) return Unknown(id, "no processes readable under /proc", why);
  CheckResult r;
  r.id = id;
  r.why = why;
  std::vector<std::string> problems;
  std::vector<std::string> fixes;
  std::vector<int> hk = in.Housekeeping();
  if (auto mask = in.view->ReadTrimmed("/sys/devices/virtual/workqueue/cpumask")) {
    auto cpus = ParseCpuMask(*mask);
    if (cpus.ok() && Overlaps(*cpus, in.focus.cpus)) {
      problems.push_back(fmt::format("unbound workqueues may run on CPUs {}", CpuListText(*cpus)));
      if (!hk.empty()) fixes.push_back(fmt::format("echo {} > /sys/devices/virtual/workqueue/cpumask", CpuMaskText(hk)));
    }
  }
  std::map<std::string, int> families;
  std::vector<int> movable_pids;
  size_t per_cpu_on_focus = 0;
  for (const auto& p : in.processes) {
    if (!p.kernel_thread || !p.cpus_allowed || p.cpus_allowed->empty()) continue;
    if (p.cpus_allowed->size() == 1) {
      // Per-CPU threads (ksoftirqd/N, kworker/N:M, migration/N) only run for
      // work their own CPU raises; they cannot be moved and are not a finding.
      if (Overlaps(*p.cpus_allowed, in.focus.cpus)) ++per_cpu_on_focus;
      continue;
    }
    if (!Overlaps(*p.cpus_allowed, in.focus.cpus)) continue;
    ++families[KthreadFamily(p.comm)];
    movable_pids.push_back(p.pid);
  }
  if (!families.empty()) {
    std::vector<std::string> names;
    for (const auto& [name, count] : families) names.push_back(count > 1 ? fmt::format("{} x{}", name, count) : name);
    problems.push_back(fmt::format("{} unbound kernel thread(s) may run on focus CPUs: {}", movable_pids.size(),
                                   JoinLimited(names, 5)));
    r.details = names;
    // Kernel threads are kthreadd's (pid 2) children; taskset refuses the
    // per-CPU ones, which is what we want.
    if (!hk.empty())
      fixes.push_back(fmt::format("for p in 2 $(pgrep -P 2); do taskset -pc {} $p 2>/dev/null; done (or boot with "
                                  "nohz_full/rcu_nocbs={}, which keeps them on housekeeping CPUs)",
                                  FormatCpuList(hk), FormatCpuList(in.focus.cpus)));
  }
  if (problems.empty()) {
    r.verdict = Verdict::kOk;
    r.saw = fmt::format("unbound kernel threads and workqueues stay off focus CPUs {}; {} per-CPU kernel threads "
                        "there run only for their own CPU's work",
                        CpuListText(in.focus.cpus), per_cpu_on_focus);
    return r;
  }
  r.verdict = Verdict::kWarn;
  r.saw = fmt::format("{}", fmt::join(problems, "; "));
  r.fix = hk.empty() ? HousekeepingOrPinFirst(in) + " restrict kernel threads to the rest" : fmt::format("{}", fmt::join(fixes, "; "));
  return r;
}

CheckResult CheckDaemons(const DoctorInputs& in) {
  const std::string id = "cpu.daemons";
  const char* why =
      "system daemons (logging, monitoring agents, container runtimes, sshd) that may run on focus CPUs "
      "preempt training threads whenever they wake";
  if (in.focus.empty()) return Unknown(id, "no focus CPUs: " + in.focus.description, why);
  if (in.processes.empty()) return Unknown(id, "no processes readable under /proc", why);
  std::vector<std::string> names;
  size_t count = 0;
  for (const auto& p : in.processes) {
    if (p.kernel_thread || p.state == 'Z' || !p.cpus_allowed) continue;
    if (in.self_pid && p.pid == in.self_pid) continue;
    if (DescendsFrom(p.pid, in.focus.pids, in.processes)) continue;
    if (!Overlaps(*p.cpus_allowed, in.focus.cpus)) continue;
    ++count;
    names.push_back(fmt::format("{} ({})", p.comm, p.pid));
  }
  CheckResult r;
  r.id = id;
  r.why = why;
  if (count == 0) {
    r.verdict = Verdict::kOk;
    r.saw = fmt::format("no process outside the focus set may run on focus CPUs {}", CpuListText(in.focus.cpus));
    return r;
  }
  r.verdict = Verdict::kWarn;
  r.saw = fmt::format("{} process(es) outside the focus set may run on focus CPUs {}: {}", count,
                      CpuListText(in.focus.cpus), JoinLimited(names, 5));
  r.details = names;
  std::vector<int> hk = in.Housekeeping();
  r.fix = hk.empty() ? HousekeepingOrPinFirst(in) + " confine the system slices to the rest"
                     : fmt::format("systemctl set-property --runtime system.slice AllowedCPUs={0}; "
                                   "systemctl set-property --runtime user.slice AllowedCPUs={0} "
                                   "(or CPUAffinity={0} in /etc/systemd/system.conf)",
                                   FormatCpuList(hk));
  return r;
}

CheckResult CheckGovernor(const DoctorInputs& in) {
  const std::string id = "cpu.governor";
  const char* why =
      "a governor other than performance lowers the clock while a CPU waits on the GPU and ramps it back "
      "up only after the next burst of work has started";
  std::string scope;
  std::vector<int> cpus = CpusToCheck(in, &scope);
  if (cpus.empty()) return Unknown(id, "no online CPUs listed in /sys/devices/system/cpu/online", why);
  std::map<std::string, std::vector<int>> by_governor;
  for (int cpu : cpus)
    if (auto g = in.view->ReadTrimmed(fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_governor", cpu)))
      by_governor[*g].push_back(cpu);
  if (by_governor.empty())
    return Unknown(id,
                   "no cpufreq policy under /sys/devices/system/cpu/cpu*/cpufreq: the frequency is managed by "
                   "firmware or the hypervisor",
                   why);
  CheckResult r;
  r.id = id;
  r.why = why;
  std::vector<std::string> parts;
  std::vector<int> slow;
  for (const auto& [governor, list] : by_governor) {
    parts.push_back(fmt::format("{} on CPUs {}", governor, CpuListText(list)));
    if (governor != "performance") slow = Union(slow, list);
  }
  r.saw = fmt::format("{}: {}", scope, fmt::join(parts, ", "));
  if (slow.empty()) {
    r.verdict = Verdict::kOk;
    return r;
  }
  r.verdict = Verdict::kWarn;
  r.fix = fmt::format(
      "cpupower -c {0} frequency-set -g performance (or for c in {1}; do echo performance > "
      "/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor; done)",
      FormatCpuList(slow), fmt::join(slow, " "));
  return r;
}

CheckResult CheckCStates(const DoctorInputs& in) {
  const std::string id = "cpu.cstates";
  const char* why = "a CPU in a deep C-state takes tens to hundreds of microseconds to wake for an interrupt or "
                    "the thread a GPU completion unblocks";
  std::string scope;
  std::vector<int> cpus = CpusToCheck(in, &scope);
  if (cpus.empty()) return Unknown(id, "no online CPUs listed in /sys/devices/system/cpu/online", why);
  std::string driver = in.view->ReadTrimmed("/sys/devices/system/cpu/cpuidle/current_driver").value_or("none");
  std::map<std::string, std::vector<int>> deep;  // "C6 (133 us)" -> CPUs
  std::vector<int> deep_cpus;
  std::vector<std::string> fix_paths;
  bool any_states = false;
  for (int cpu : cpus) {
    std::string dir = fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle", cpu);
    for (const std::string& state : in.view->List(dir)) {
      if (!StartsWith(state, "state")) continue;
      any_states = true;
      std::string sdir = dir + "/" + state;
      auto latency = in.view->ReadInt(sdir + "/latency");
      auto disabled = in.view->ReadInt(sdir + "/disable");
      if (!latency || *latency <= kDeepCStateLatencyUs || disabled.value_or(0) != 0) continue;
      std::string name = in.view->ReadTrimmed(sdir + "/name").value_or(state);
      deep[fmt::format("{} ({} us)", name, *latency)].push_back(cpu);
      deep_cpus = Union(deep_cpus, {cpu});
      if (fix_paths.size() < 2) fix_paths.push_back(sdir + "/disable");
    }
  }
  if (!any_states)
    return Unknown(id,
                   fmt::format("no idle states under /sys/devices/system/cpu/cpu*/cpuidle (cpuidle driver: {})", driver),
                   why);
  CheckResult r;
  r.id = id;
  r.why = why;
  if (deep.empty()) {
    r.verdict = Verdict::kOk;
    r.saw = fmt::format("{}: no enabled idle state deeper than {} us (driver {})", scope, kDeepCStateLatencyUs, driver);
    return r;
  }
  std::vector<std::string> parts;
  for (const auto& [state, list] : deep) parts.push_back(fmt::format("{} on CPUs {}", state, CpuListText(list)));
  r.verdict = Verdict::kWarn;
  r.saw = fmt::format("{}: deep idle states enabled: {} (driver {})", scope, JoinLimited(parts, 4), driver);
  r.fix = fmt::format("cpupower -c {} idle-set -D {} (or echo 1 > {} ...), or boot with intel_idle.max_cstate=1 "
                      "processor.max_cstate=1",
                      FormatCpuList(deep_cpus), kDeepCStateLatencyUs, fix_paths.front());
  return r;
}

CheckResult CheckNumaBalancing(const DoctorInputs& in) {
  const std::string id = "mem.numa_balancing";
  const char* why =
      "automatic NUMA balancing unmaps pages to sample accesses and migrates them; training threads take the "
      "hinting faults and wait for the migrations";
  auto value = in.view->ReadInt("/proc/sys/kernel/numa_balancing");
  size_t nodes = in.inventory.numa_nodes.size();
  CheckResult r;
  r.id = id;
  r.why = why;
  if (!value) {
    if (!in.view->Exists("/proc/sys/kernel")) return Unknown(id, "/proc/sys/kernel unreadable", why);
    r.verdict = Verdict::kOk;
    r.saw = "kernel.numa_balancing absent: the kernel is built without automatic NUMA balancing";
    return r;
  }
  if (*value == 0) {
    r.verdict = Verdict::kOk;
    r.saw = "kernel.numa_balancing=0";
    return r;
  }
  if (nodes <= 1) {
    r.verdict = Verdict::kOk;
    r.saw = fmt::format("kernel.numa_balancing={} but one NUMA node: nothing to migrate", *value);
    return r;
  }
  r.verdict = Verdict::kWarn;
  r.saw = fmt::format("kernel.numa_balancing={} on {} NUMA nodes", *value, nodes);
  r.fix = "sysctl -w kernel.numa_balancing=0 (persist: echo kernel.numa_balancing=0 > /etc/sysctl.d/90-gpunoise.conf)";
  return r;
}

CheckResult CheckThp(const DoctorInputs& in) {
  const std::string id = "mem.thp";
  const char* why =
      "with THP defrag 'always' a page fault that finds no free huge page compacts memory synchronously, "
      "stalling the faulting thread for milliseconds";
  auto defrag = in.view->ReadTrimmed("/sys/kernel/mm/transparent_hugepage/defrag");
  if (!defrag) return Unknown(id, "/sys/kernel/mm/transparent_hugepage/defrag absent (kernel without THP)", why);
  std::string enabled =
      SelectedChoice(in.view->ReadTrimmed("/sys/kernel/mm/transparent_hugepage/enabled").value_or("?"));
  std::string mode = SelectedChoice(*defrag);
  CheckResult r;
  r.id = id;
  r.why = why;
  r.saw = fmt::format("transparent_hugepage enabled={} defrag={}", enabled, mode);
  if (mode == "always" && enabled != "never") {
    r.verdict = Verdict::kWarn;
    r.fix = "echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag";
    return r;
  }
  r.verdict = Verdict::kOk;
  return r;
}

CheckResult CheckSwap(const DoctorInputs& in) {
  const std::string id = "mem.swap";
  const char* why = "a swapped-out page of the training process (or its pinned staging buffers' neighbours) "
                    "stalls the thread that touches it for a disk read";
  auto swaps = in.view->Read("/proc/swaps");
  if (!swaps.ok()) return Unknown(id, "/proc/swaps unreadable", why);
  std::vector<std::string> devices;
  uint64_t size_kb = 0, used_kb = 0;
  auto lines = Split(*swaps, '\n');
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string_view> words = SplitWhitespace(lines[i]);
    if (words.size() < 4) continue;
    devices.emplace_back(words[0]);
    size_kb += ParseUint64(words[2]).value_or(0);
    used_kb += ParseUint64(words[3]).value_or(0);
  }
  auto swappiness = in.view->ReadInt("/proc/sys/vm/swappiness");
  CheckResult r;
  r.id = id;
  r.why = why;
  if (devices.empty()) {
    r.verdict = Verdict::kOk;
    r.saw = "no swap active";
    return r;
  }
  r.verdict = Verdict::kWarn;
  r.saw = fmt::format("swap active on {} ({} MiB, {} MiB used){}", JoinLimited(devices, 3), size_kb / 1024,
                      used_kb / 1024, swappiness ? fmt::format(", vm.swappiness={}", *swappiness) : "");
  r.fix = "swapoff -a and remove swap from /etc/fstab (or at least sysctl -w vm.swappiness=1)";
  return r;
}

}  // namespace gpunoise::doctor
