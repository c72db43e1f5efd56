#include "model/kernel_log.h"

#include <fmt/format.h>

#include <mutex>
#include <regex>
#include <vector>

namespace gpunoise::model {
namespace {

using C = KernelLogClass;
using S = KernelLogSeverity;

// Order matters: the first match wins (thermal before machine check: both
// come from the mce driver; hung task before the generic ones). Each
// pattern cites the message format it is for.
constexpr KernelLogPattern kPatterns[] = {
    // net/sched/sch_generic.c dev_watchdog: "NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out 5120 ms"
    {C::kTxTimeout, "tx_timeout", "NetdevTxTimeout", S::kSevere,
     R"(.*NETDEV WATCHDOG: (\S+) \([^)]*\): transmit queue \d+ timed out.*)", 1, 0, 0, "NETDEV WATCHDOG: "},
    // The same watchdog since 6.7 (netdev_crit, so prefixed by netdev_printk's "DRIVER BUS NETDEV: " or
    // "NETDEV: "): "mlx5_core 0000:3b:00.0 eth0: NETDEV WATCHDOG: CPU: 3: transmit queue 5 timed out 5120 ms"
    // (the CPU is the one the watchdog timer ran on, not the device's)
    {C::kTxTimeout, "tx_timeout", "NetdevTxTimeout", S::kSevere,
     R"(.*?(\S+): NETDEV WATCHDOG: CPU: \d+: transmit queue \d+ timed out.*)", 1, 0, 0, "NETDEV WATCHDOG: CPU: "},
    // mlx5e_tx_timeout_work: "mlx5_core 0000:3b:00.0 eth0: TX timeout detected";
    // ice_tx_timeout: "ice 0000:af:00.0 eth1: tx_timeout: VSI_num: 6, Q 5, NTC: 0x1a, ..."
    {C::kTxTimeout, "tx_timeout", "NicTxTimeout", S::kSevere,
     R"(.*\S+ [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d (\S+): (TX timeout detected|tx_timeout: |Tx timeout ).*)", 1, 0, 0, "imeout"},
    // "mlx5_core 0000:3b:00.0 eth0: Link down", "ice 0000:af:00.0 eth1: NIC Link is Down",
    // "bnxt_en 0000:3b:00.0 eth0: NIC Link is Down", "i40e 0000:3b:00.0 eth0: NIC Link is Down"
    {C::kLinkDown, "link_down", "NicLinkDown", S::kWarning,
     R"(.*\S+ [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d (\S+): (NIC )?Link (is )?[Dd]own$)", 1, 0, 0, "Link "},
    // gve_handle_link_status: "gve 0000:00:04.0: Device link is down." (no netdev name)
    {C::kLinkDown, "link_down", "NicLinkDown", S::kWarning,
     R"(.*\S+ ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d): Device link is down\.?$)", 1, 0, 0, "Device link is down"},
    // bridge ports (net/bridge/br_stp.c): "br0: port 1(veth0) entered disabled state"
    {C::kLinkDown, "link_down", "BridgePortDown", S::kWarning,
     R"(.*\S+: port \d+\((\S+)\) entered disabled state$)", 1, 0, 0, "entered disabled state"},
    // "mlx5_core 0000:3b:00.0 eth0: Link up", "ice 0000:af:00.0 eth1: NIC Link is up 100 Gbps Full Duplex, ...",
    // "i40e 0000:3b:00.0 eth0: NIC Link is Up, 40 Gbps Full Duplex, Flow Control: None"
    {C::kLinkUp, "link_up", "NicLinkUp", S::kInfo,
     R"(.*\S+ [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d (\S+): (NIC )?Link (is )?[Uu]p.*)", 1, 0, 0, "Link "},
    {C::kLinkUp, "link_up", "NicLinkUp", S::kInfo,
     R"(.*\S+ ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d): Device link is up\.?$)", 1, 0, 0, "Device link is up"},
    {C::kLinkUp, "link_up", "BridgePortUp", S::kInfo,
     R"(.*\S+: port \d+\((\S+)\) entered forwarding state$)", 1, 0, 0, "entered forwarding state"},
    // Resets: mlx5 "mlx5_core 0000:3b:00.0: mlx5_fw_tracer... / health: Performing PCI recovery",
    // "mlx5_core 0000:3b:00.0: mlx5_fw_reset_nic_interface_... / Sync Reset", ice "ice 0000:af:00.0: PFR reset",
    // i40e "i40e 0000:3b:00.0: TX driver issue detected, PF reset issued", bnxt "bnxt_en 0000:3b:00.0 eth0: Resetting",
    // ena "ena 0000:00:05.0: Trigger reset is on", gve "gve 0000:00:04.0: Performing reset"
    {C::kNicReset, "nic_reset", "NicReset", S::kSevere,
     R"(.*\S+ ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d)( \S+)?: .*(Performing PCI recovery|Performing reset|Trigger reset is on|PF reset issued|PFR reset|CORER|GLOBR|Sync Reset|Resetting|reset_work|firmware fatal error).*)",
     1, 0, 0, "reset|Reset|recovery|CORER|GLOBR|firmware fatal error"},
    // kernel/watchdog.c: "watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [kworker/3:1:123]"
    {C::kSoftLockup, "soft_lockup", "SoftLockup", S::kSevere,
     R"(.*BUG: soft lockup - CPU#(\d+) stuck for \d+s! \[(.+):\d+\].*)", 0, 1, 2, "BUG: soft lockup"},
    // kernel/watchdog_perf.c / watchdog_buddy: "watchdog: Watchdog detected hard LOCKUP on cpu 5"
    {C::kHardLockup, "hard_lockup", "HardLockup", S::kSevere,
     R"(.*Watchdog detected hard LOCKUP on cpu (\d+).*)", 0, 1, 0, "hard LOCKUP"},
    // kernel/rcu/tree_stall.h: "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
    // "rcu: INFO: rcu_sched self-detected stall on CPU", "rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 3-... }"
    {C::kRcuStall, "rcu_stall", "RcuStall", S::kSevere,
     R"(.*rcu: INFO: \w+ (self-)?detected (expedited )?stalls? on CPU.*)", 0, 0, 0, "rcu: INFO: "},
    // kernel/hung_task.c: "INFO: task kworker/3:1:123 blocked for more than 122 seconds."
    {C::kHungTask, "hung_task", "HungTask", S::kWarning,
     R"(.*INFO: task (.+):\d+ blocked for more than \d+ seconds\..*)", 0, 0, 1, "blocked for more than"},
    // mm/page_alloc.c warn_alloc: "kworker/0:1: page allocation failure: order:4, mode:0x40cc0(GFP_KERNEL|__GFP_COMP), ..."
    {C::kPageAllocFailure, "page_alloc_failure", "PageAllocationFailure", S::kWarning,
     R"(.*?(\S+): page allocation failure: order:\d+.*)", 0, 0, 1, "page allocation failure"},
    // drivers/pci/pcie/aer.c: "pcieport 0000:00:03.0: AER: Corrected error message received from 0000:3b:00.0",
    // "AER: Uncorrected (Non-Fatal) error message received from ...", "PCIe Bus Error: severity=Uncorrected (Fatal), ..."
    {C::kPcieAer, "pcie_aer", "PcieAerError", S::kWarning,
     R"(.*\S+ ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d): (AER: (Corrected|Correctable|Uncorrectable|Uncorrected|Multiple).* error.*|PCIe Bus Error: severity=.*))",
     1, 0, 0, "AER: |PCIe Bus Error"},
    // arch/x86/kernel/cpu/mce/therm_throt.c: "mce: CPU3: Core temperature above threshold, cpu clock throttled (total events = 1)",
    // "mce: CPU0: Package temperature above threshold, cpu clock throttled (total events = 5)"
    {C::kThermal, "thermal", "ThermalThrottling", S::kWarning,
     R"(.*CPU(\d+): (Core|Package) temperature above threshold, cpu clock throttled.*)", 0, 1, 0, "temperature above threshold"},
    {C::kThermal, "thermal", "ThermalCritical", S::kSevere,
     R"(.*(thermal_zone\d+|thermal \S+): critical temperature reached.*)", 1, 0, 0, "critical temperature reached"},
    // arch/x86/kernel/cpu/mce: "mce: [Hardware Error]: Machine check events logged",
    // "mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 5: be00000000800400"
    {C::kMachineCheck, "machine_check", "MachineCheck", S::kSevere,
     R"(.*mce: \[Hardware Error\]: (CPU (\d+): )?Machine [Cc]heck.*)", 0, 2, 0, "mce: [Hardware Error]: "},
    // NVIDIA's driver: "NVRM: Xid (PCI:0000:17:00): 79, pid=1234, name=python, GPU has fallen off the bus."
    {C::kGpuXid, "gpu_xid", "NvidiaXid", S::kSevere,
     R"(.*NVRM: Xid \((PCI:[0-9a-fA-F:.]+)\): \d+,.*)", 1, 0, 0, "NVRM: Xid ("},
};

struct Compiled {
  std::vector<std::regex> regexes;
};

const Compiled& CompiledPatterns() {
  static const Compiled compiled = [] {
    Compiled c;
    for (const KernelLogPattern& p : kPatterns) {
      // The leading ".*" (node-problem-detector matches from the start of
      // the message) is left out here: regex_search finds the match
      // anywhere anyway, and with it std::regex backtracks in cubic time
      // (a 400-byte line took 4 s to classify; "Modules linked in:" lines
      // are longer).
      std::string_view pattern = p.pattern;
      if (pattern.starts_with(".*?")) pattern.remove_prefix(3);
      else if (pattern.starts_with(".*")) pattern.remove_prefix(2);
      c.regexes.emplace_back(std::string(pattern) + "$", std::regex::ECMAScript | std::regex::optimize);
    }
    return c;
  }();
  return compiled;
}

// A pattern can only match text that has one of its literals: a search
// for them is ~100 times cheaper than std::regex, and most lines have none.
bool MayMatch(const KernelLogPattern& p, std::string_view text) {
  if (p.literals.empty()) return true;
  for (std::string_view rest = p.literals; !rest.empty();) {
    size_t bar = rest.find('|');
    std::string_view literal = rest.substr(0, bar);
    if (text.find(literal) != std::string_view::npos) return true;
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
  return false;
}

std::string JsonEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::span<const KernelLogPattern> KernelLogPatterns() { return kPatterns; }

std::string_view KernelLogSourceName(KernelLogSource source) {
  switch (source) {
    case KernelLogSource::kKmsg: return "kmsg";
    case KernelLogSource::kConsole: return "console";
    case KernelLogSource::kBoth: return "both";
  }
  return "kmsg";
}

std::optional<KernelLogSource> ParseKernelLogSource(std::string_view name) {
  for (auto s : {KernelLogSource::kKmsg, KernelLogSource::kConsole, KernelLogSource::kBoth})
    if (KernelLogSourceName(s) == name) return s;
  return std::nullopt;
}

std::string_view KernelLogClassName(KernelLogClass cls) {
  if (cls == C::kNone) return "none";
  if (const KernelLogPattern* p = FindKernelLogPattern(cls)) return p->name;
  return "?";
}

const KernelLogPattern* FindKernelLogPattern(KernelLogClass cls) {
  for (const KernelLogPattern& p : kPatterns)
    if (p.cls == cls) return &p;
  return nullptr;
}

KernelLogMatch ClassifyKernelLog(std::string_view text) {
  KernelLogMatch m;
  // Cheap pre-checks keep std::regex off the common lines.
  if (text.size() < 8) return m;
  const Compiled& c = CompiledPatterns();
  std::match_results<std::string_view::const_iterator> groups;
  for (size_t i = 0; i < c.regexes.size(); ++i) {
    if (!MayMatch(kPatterns[i], text)) continue;
    if (!std::regex_search(text.begin(), text.end(), groups, c.regexes[i])) continue;
    const KernelLogPattern& p = kPatterns[i];
    m.cls = p.cls;
    m.severity = p.severity;
    auto group = [&](int g) { return g > 0 && groups[g].matched ? groups[g].str() : std::string(); };
    m.device = group(p.device_group);
    if (std::string cpu = group(p.cpu_group); !cpu.empty()) m.cpu = std::stoi(cpu);
    m.task = group(p.task_group);
    return m;
  }
  return m;
}

std::string RenderNpdKernelMonitorConfig() {
  std::string out =
      "{\n"
      "  \"plugin\": \"kmsg\",\n"
      "  \"logPath\": \"/dev/kmsg\",\n"
      "  \"lookback\": \"5m\",\n"
      "  \"bufferSize\": 10,\n"
      "  \"source\": \"gpunoise-kernel-monitor\",\n"
      "  \"metricsReporting\": true,\n"
      "  \"conditions\": [],\n"
      "  \"rules\": [\n";
  for (size_t i = 0; i < std::size(kPatterns); ++i) {
    const KernelLogPattern& p = kPatterns[i];
    out += fmt::format("    {{\n      \"type\": \"temporary\",\n      \"reason\": \"{}\",\n      \"pattern\": \"{}\"\n    }}{}\n",
                       p.reason, JsonEscape(p.pattern), i + 1 < std::size(kPatterns) ? "," : "");
  }
  out += "  ]\n}\n";
  return out;
}

}  // namespace gpunoise::model
