#include "doctor/crash_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/strings.h"

namespace gpunoise::doctor {
namespace {

constexpr const char* kInstance = "/sys/kernel/tracing/instances/gpunoise_blackbox";

}  // namespace

CheckResult CheckPanicSettings(const DoctorInputs& in) {
  const std::string id = "kernel.panic";
  const char* why = "a kernel that panics with panic=0 waits for ever (no reboot, no evidence collected); one that "
                    "oopses or locks up without panicking keeps a half-dead node in the job, and only a panic "
                    "reaches kdump or the black box's warm reboot";
  auto panic = in.view->ReadInt("/proc/sys/kernel/panic");
  if (!panic) return Unknown(id, "no /proc/sys/kernel/panic", why);
  CheckResult r;
  r.id = id;
  r.why = why;
  r.verdict = Verdict::kOk;
  // The settings that turn a hang into a panic (kernel-parameters.txt,
  // Documentation/admin-guide/sysctl/kernel.rst).
  static constexpr std::pair<const char*, const char*> kTriggers[] = {
      {"panic_on_oops", "/proc/sys/kernel/panic_on_oops"},
      {"softlockup_panic", "/proc/sys/kernel/softlockup_panic"},
      {"hardlockup_panic", "/proc/sys/kernel/hardlockup_panic"},
      {"hung_task_panic", "/proc/sys/kernel/hung_task_panic"},
      {"panic_on_rcu_stall", "/proc/sys/kernel/panic_on_rcu_stall"},
      {"panic_on_warn", "/proc/sys/kernel/panic_on_warn"},
  };
  std::vector<std::string> parts{fmt::format("panic={}", *panic)};
  std::vector<std::string> off;
  for (const auto& [name, path] : kTriggers) {
    auto v = in.view->ReadInt(path);
    if (!v) continue;
    parts.push_back(fmt::format("{}={}", name, *v));
    if (*v == 0 && std::string_view(name) != "panic_on_warn") off.emplace_back(name);
  }
  r.saw = fmt::format("{}", fmt::join(parts, " "));
  if (*panic == 0) {
    r.verdict = Verdict::kWarn;
    r.details.push_back("panic=0: a panicked node never reboots");
  }
  auto oops = in.view->ReadInt("/proc/sys/kernel/panic_on_oops");
  if (oops && *oops == 0) {
    r.verdict = Verdict::kWarn;
    r.details.push_back("panic_on_oops=0: after an oops the node keeps running a damaged kernel");
  }
  for (const auto& o : off)
    if (o != "panic_on_oops") r.details.push_back(o + "=0: that hang does not end in a panic (and so in no evidence)");
  if (r.verdict != Verdict::kOk)
    r.fix = "sysctl -w kernel.panic=10 kernel.panic_on_oops=1 (and persist them in /etc/sysctl.d); consider "
            "kernel.softlockup_panic=1 kernel.hung_task_panic=1 on nodes whose jobs cannot survive a hang";
  return r;
}

CheckResult CheckCrashEvidence(const DoctorInputs& in) {
  const std::string id = "kernel.evidence";
  const char* why = "after a crash, the crashed kernel's last log (pstore/ramoops) or its memory (kdump) is what "
                    "says why; without either, a node that rebooted leaves only a gap in the metrics";
  const SystemView& v = *in.view;
  bool have_pstore_dir = v.Exists("/sys/fs/pstore");
  auto backend = v.ReadTrimmed("/sys/module/pstore/parameters/backend");
  auto ramoops = v.ReadInt("/sys/module/ramoops/parameters/mem_size");
  auto kdump = v.ReadInt("/sys/kernel/kexec_crash_loaded");
  auto crash_size = v.ReadInt("/sys/kernel/kexec_crash_size");
  if (!have_pstore_dir && !backend && !kdump && !crash_size)
    return Unknown(id, "no /sys/fs/pstore, pstore module parameters or /sys/kernel/kexec_crash_* to read", why);
  CheckResult r;
  r.id = id;
  r.why = why;
  bool pstore = (backend && !backend->empty() && *backend != "(null)") || (ramoops && *ramoops > 0);
  bool kdump_ready = kdump && *kdump == 1;
  std::vector<std::string> parts;
  parts.push_back(pstore ? fmt::format("pstore backend {}", backend.value_or("ramoops"))
                         : std::string("no pstore backend"));
  if (have_pstore_dir) {
    size_t records = v.List("/sys/fs/pstore").size();
    if (records) parts.push_back(fmt::format("{} pstore record(s) of an earlier crash in /sys/fs/pstore", records));
  }
  parts.push_back(kdump_ready ? fmt::format("kdump loaded ({} MiB reserved)", crash_size.value_or(0) >> 20)
                              : crash_size && *crash_size > 0 ? "crashkernel memory reserved but no kdump kernel loaded"
                                                              : "no kdump");
  r.saw = fmt::format("{}", fmt::join(parts, "; "));
  r.verdict = pstore || kdump_ready ? Verdict::kOk : Verdict::kWarn;
  if (r.verdict == Verdict::kWarn)
    r.fix = "reserve memory for ramoops (reserve_mem=2M:4096:oops ramoops.mem_name=oops) or install and enable kdump "
            "(kdump-tools / kexec-tools with crashkernel=); docs/blackbox.md";
  return r;
}

CheckResult CheckBlackBox(const DoctorInputs& in) {
  const std::string id = "kernel.blackbox";
  const char* why = "a persistent trace buffer keeps what the NIC, its interrupts and the CPUs did in the last "
                    "seconds before a panic or hang, readable after a warm reboot (Linux 6.12+)";
  const SystemView& v = *in.view;
  if (!v.Exists("/sys/kernel/tracing/instances"))
    return Unknown(id, "tracefs is not mounted at /sys/kernel/tracing", why);
  CheckResult r;
  r.id = id;
  r.why = why;
  r.verdict = Verdict::kOk;
  if (!v.Exists(kInstance)) {
    r.saw = "not armed: no gpunoise_blackbox instance on this boot";
    r.fix = "gpunoise blackbox arm --print shows the kernel command line (then arm after the reboot)";
    return r;
  }
  std::string base = kInstance;
  bool persistent = v.Exists(base + "/last_boot_info");
  auto last = v.ReadTrimmed(base + "/last_boot_info");
  bool previous = persistent && last && last->find("[kernel]") != std::string::npos;
  auto on = v.ReadInt(base + "/tracing_on");
  uint64_t entries = 0;
  for (const auto& cpu : v.List(base + "/per_cpu"))
    if (auto stats = v.ReadTrimmed(base + "/per_cpu/" + cpu + "/stats"))
      for (std::string_view line : Split(*stats, '\n'))
        if (StartsWith(line, "entries:")) entries += ParseUint64(Trim(line.substr(8))).value_or(0);
  if (previous && entries > 0 && !(on && *on == 1)) {
    r.verdict = Verdict::kWarn;
    r.saw = fmt::format("holding {} records of the previous boot, not collected", entries);
    r.fix = "gpunoise blackbox collect -o crash.pftrace (then gpunoise blackbox arm)";
    return r;
  }
  r.saw = fmt::format("{}, {}", persistent ? "persistent buffer" : "plain instance (does not survive a reboot)",
                      on && *on == 1 ? "armed (recording)" : "not recording");
  if (!(on && *on == 1)) r.fix = "gpunoise blackbox arm";
  return r;
}

}  // namespace gpunoise::doctor
