#include "doctor/irq_checks.h"

#include <fmt/format.h>

#include <map>

#include "common/cpu_list.h"
#include "common/strings.h"
#include "doctor/check_util.h"
#include "doctor/cpu_set.h"

namespace gpunoise::doctor {
namespace {

constexpr const char* kPlacementWhy =
    "an interrupt preempts whatever runs on its CPU, and its softirq (NET_RX, block completion) "
    "runs there too: on a training CPU that is time stolen from the step";

struct DeviceIrqs {
  std::string label;  // "eth0", "GPU 0000:17:00.0", "NVMe 0000:5e:00.0"
  PciKind kind;
  std::vector<int> irqs;
};

std::vector<DeviceIrqs> DevicesWithIrqs(const DoctorInputs& in) {
  std::map<std::string, std::vector<std::string>> ifnames;  // bdf -> interfaces
  for (const NetInterface* nic : in.inventory.PhysicalNics()) ifnames[nic->pci_bdf].push_back(nic->name);
  std::vector<DeviceIrqs> out;
  for (const auto& d : in.inventory.pci) {
    PciKind kind = d.kind;
    if (ifnames.count(d.bdf)) kind = PciKind::kNic;
    if (kind == PciKind::kOther || d.irqs.empty()) continue;
    std::string label = kind == PciKind::kNic && ifnames.count(d.bdf)
                            ? fmt::format("{}", fmt::join(ifnames[d.bdf], "/"))
                            : fmt::format("{} {}", PciKindName(kind), d.bdf);
    out.push_back({label, kind, d.irqs});
  }
  return out;
}

// Parses "KEY=value" lines of an environment block or EnvironmentFile.
std::vector<int> BannedFromAssignments(std::string_view text, char separator) {
  std::vector<int> banned;
  for (std::string_view line : Split(text, separator)) {
    line = Trim(line);
    if (line.empty() || line.front() == '#') continue;
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = Trim(line.substr(0, eq));
    std::string value(Trim(line.substr(eq + 1)));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) value = value.substr(1, value.size() - 2);
    if (value.empty()) continue;
    if (key == "IRQBALANCE_BANNED_CPUS") {
      if (auto cpus = ParseCpuMask(value); cpus.ok()) banned = Union(banned, *cpus);
    } else if (key == "IRQBALANCE_BANNED_CPULIST") {
      if (auto cpus = ParseCpuList(value); cpus.ok()) banned = Union(banned, *cpus);
    }
  }
  return banned;
}

}  // namespace

std::vector<int> IrqbalanceBannedCpus(const SystemView& view, int pid) {
  std::vector<int> banned;
  if (auto env = view.Read("/proc/" + std::to_string(pid) + "/environ"); env.ok())
    banned = Union(banned, BannedFromAssignments(*env, '\0'));
  // systemd passes these files as EnvironmentFile; reading them also covers
  // an environ we may not read.
  for (const char* file : {"/etc/default/irqbalance", "/etc/sysconfig/irqbalance"})
    if (auto text = view.Read(file); text.ok()) banned = Union(banned, BannedFromAssignments(*text, '\n'));
  return banned;
}

CheckResult CheckIrqPlacement(const DoctorInputs& in) {
  const std::string id = "irq.placement";
  if (in.focus.empty()) return Unknown(id, "no focus CPUs: " + in.focus.description, kPlacementWhy);
  std::vector<DeviceIrqs> devices = DevicesWithIrqs(in);
  if (devices.empty())
    return Unknown(id, "no NIC, NVMe or GPU with IRQs under /sys/bus/pci/devices (msi_irqs, irq)", kPlacementWhy);

  CheckResult r;
  r.id = id;
  r.why = kPlacementWhy;
  size_t total = 0, unreadable = 0;
  std::vector<int> offending_irqs;
  std::vector<std::string> offenders;
  for (const auto& dev : devices) {
    for (int irq : dev.irqs) {
      ++total;
      IrqAffinity a = ReadIrqAffinity(*in.view, irq, in.inventory.irq_names);
      const std::optional<std::vector<int>>& cpus = a.effective ? a.effective : a.allowed;
      if (!cpus) {
        ++unreadable;
        continue;
      }
      if (!Overlaps(*cpus, in.focus.cpus)) continue;
      // Managed NVMe vectors serve the CPUs in their mask: when every CPU
      // that can submit to it is a focus CPU, the interrupt only completes
      // the focus CPUs' own I/O, by design.
      if (dev.kind == PciKind::kNvme && a.allowed && IsSubset(*a.allowed, in.focus.cpus)) continue;
      offending_irqs.push_back(irq);
      r.details.push_back(fmt::format("{} IRQ {}{} on CPU {}", dev.label, irq,
                                      a.name.empty() ? "" : fmt::format(" ({})", a.name), CpuListText(*cpus)));
    }
  }
  for (const auto& dev : devices) {
    size_t n = 0;
    for (int irq : offending_irqs)
      for (int d : dev.irqs) n += (d == irq);
    if (n) offenders.push_back(fmt::format("{} ({} IRQ{})", dev.label, n, n == 1 ? "" : "s"));
  }
  if (unreadable == total)
    return Unknown(id, fmt::format("none of {} device IRQs has a readable affinity in /proc/irq", total), kPlacementWhy);
  if (offending_irqs.empty()) {
    r.verdict = Verdict::kOk;
    r.saw = fmt::format("{} device IRQs of {} device(s), none on focus CPUs {}", total - unreadable, devices.size(),
                        CpuListText(in.focus.cpus));
    return r;
  }
  r.verdict = Verdict::kWarn;
  r.saw = fmt::format("{} of {} device IRQs run on focus CPUs {}: {}", offending_irqs.size(), total - unreadable,
                      CpuListText(in.focus.cpus), JoinLimited(offenders));
  std::vector<int> hk = in.Housekeeping();
  std::vector<std::string> irq_names;
  for (int irq : offending_irqs) irq_names.push_back(std::to_string(irq));
  r.fix = hk.empty() ? HousekeepingOrPinFirst(in) + " move the IRQs there"
                     : fmt::format("for irq in {}; do echo {} > /proc/irq/$irq/smp_affinity_list; done "
                                   "(and ban the focus CPUs in irqbalance, or stop it)",
                                   fmt::join(irq_names, " "), FormatCpuList(hk));
  return r;
}

CheckResult CheckIrqBalance(const DoctorInputs& in) {
  const std::string id = "irq.irqbalance";
  const char* why =
      "irqbalance rewrites IRQ affinities every 10 s; unless the focus CPUs are banned it can move NIC and "
      "NVMe interrupts back onto them after they were placed by hand";
  std::vector<const ProcessInfo*> running;
  for (const auto& p : in.processes)
    if (!p.kernel_thread && p.comm == "irqbalance" && p.state != 'Z') running.push_back(&p);
  if (in.processes.empty())
    return Unknown(id, "no processes readable under /proc", why);
  CheckResult r;
  r.id = id;
  r.why = why;
  if (running.empty()) {
    r.verdict = Verdict::kOk;
    r.saw = "irqbalance is not running: IRQ affinities stay where they are set";
    return r;
  }
  const ProcessInfo& p = *running.front();
  // irqbalance (since 1.8) also leaves isolated and nohz_full CPUs alone.
  std::vector<int> banned = Union(IrqbalanceBannedCpus(*in.view, p.pid), in.isolation.NonHousekeeping());
  if (in.focus.empty()) {
    return Unknown(id,
                   fmt::format("irqbalance runs (pid {}), banned CPUs {}; no focus CPUs to compare against", p.pid,
                               CpuListText(banned)),
                   why);
  }
  std::vector<int> exposed = Subtract(in.focus.cpus, banned);
  if (exposed.empty()) {
    r.verdict = Verdict::kOk;
    r.saw = fmt::format("irqbalance (pid {}) keeps off focus CPUs {} (banned or isolated: {})", p.pid,
                        CpuListText(in.focus.cpus), CpuListText(banned));
    return r;
  }
  r.verdict = Verdict::kWarn;
  r.saw = fmt::format("irqbalance (pid {}) may move IRQs onto focus CPUs {} (banned or isolated: {})", p.pid,
                      CpuListText(exposed), CpuListText(banned));
  r.fix = fmt::format(
      "echo 'IRQBALANCE_BANNED_CPULIST={}' >> /etc/default/irqbalance && systemctl restart irqbalance "
      "(or systemctl disable --now irqbalance and place IRQs by hand)",
      FormatCpuList(in.focus.cpus));
  return r;
}

CheckResult CheckPacketSteering(const DoctorInputs& in) {
  const std::string id = "irq.steering";
  const char* why =
      "RPS hands received packets to other CPUs' softirqs and RFS to the CPU where the reading thread "
      "runs; either can put protocol processing on training CPUs. XPS picks TX queues by sending CPU";
  std::vector<const NetInterface*> nics = in.inventory.PhysicalNics();
  if (nics.empty()) return Unknown(id, "no physical NIC (none under /sys/class/net has a PCI device)", why);
  CheckResult r;
  r.id = id;
  r.why = why;
  int64_t sock_flow_entries = in.view->ReadInt("/proc/sys/net/core/rps_sock_flow_entries").value_or(0);
  bool any_rps_file = false, any_rps = false, rfs = false;
  std::vector<std::string> notes, problems;
  std::vector<std::string> fixes;
  for (const NetInterface* nic : nics) {
    std::string qdir = "/sys/class/net/" + nic->name + "/queues/";
    size_t rps_queues = 0, xps_queues = 0, flow_queues = 0;
    std::vector<int> rps_cpus;
    for (const auto& q : nic->rx_queues) {
      auto mask = in.view->ReadTrimmed(qdir + q + "/rps_cpus");
      if (!mask) continue;
      any_rps_file = true;
      auto cpus = ParseCpuMask(*mask);
      if (cpus.ok() && !cpus->empty()) {
        ++rps_queues;
        rps_cpus = Union(rps_cpus, *cpus);
        if (!in.focus.empty() && Overlaps(*cpus, in.focus.cpus)) {
          problems.push_back(fmt::format("{} {} RPS to CPUs {}", nic->name, q, CpuListText(*cpus)));
          fixes.push_back(fmt::format("echo 0 > {}{}/rps_cpus", qdir, q));
        }
      }
      if (in.view->ReadInt(qdir + q + "/rps_flow_cnt").value_or(0) > 0) ++flow_queues;
    }
    for (const auto& q : nic->tx_queues) {
      auto mask = in.view->ReadTrimmed(qdir + q + "/xps_cpus");
      if (!mask) continue;
      auto cpus = ParseCpuMask(*mask);
      if (cpus.ok() && !cpus->empty()) ++xps_queues;
    }
    any_rps |= rps_queues > 0;
    bool nic_rfs = sock_flow_entries > 0 && flow_queues > 0;
    rfs |= nic_rfs;
    notes.push_back(fmt::format("{}: RPS {} ({} of {} rx queues), RFS {}, XPS on {} of {} tx queues", nic->name,
                                rps_queues ? "to CPUs " + CpuListText(rps_cpus) : std::string("off"), rps_queues,
                                nic->rx_queues.size(), nic_rfs ? "on" : "off", xps_queues, nic->tx_queues.size()));
  }
  r.details = notes;
  if (!any_rps_file) return Unknown(id, "no rps_cpus files under /sys/class/net/*/queues (kernel without RPS)", why);
  if (rfs && !in.focus.empty()) {
    problems.push_back(fmt::format("RFS on (net.core.rps_sock_flow_entries={}): receive work follows the "
                                   "reading threads onto their CPUs",
                                   sock_flow_entries));
    fixes.push_back("sysctl -w net.core.rps_sock_flow_entries=0");
  }
  if (!problems.empty()) {
    r.verdict = Verdict::kWarn;
    r.saw = fmt::format("steering onto focus CPUs {}: {}", CpuListText(in.focus.cpus), JoinLimited(problems, 3));
    r.fix = JoinCommands(fixes);
    return r;
  }
  if (in.focus.empty() && (any_rps || rfs)) {
    r.verdict = Verdict::kUnknown;
    r.saw = fmt::format("{}; no focus CPUs to compare against", JoinLimited(notes, 3));
    return r;
  }
  r.verdict = Verdict::kOk;
  r.saw = JoinLimited(notes, 3);
  return r;
}

}  // namespace gpunoise::doctor
