#include "doctor/nic_checks.h"

#include <net/if.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <map>

#include "doctor/check_util.h"

namespace gpunoise::doctor {
namespace {

constexpr const char* kNoNic = "no physical NIC (none under /sys/class/net has a PCI device)";

// virtio-net feature bit for notification (interrupt) coalescing
// (include/uapi/linux/virtio_net.h); without it virtio_net reports fixed
// placeholder values and refuses changes.
constexpr size_t kVirtioNetFNotfCoal = 53;

bool HasVirtioFeature(const NetInterface& nic, size_t bit) {
  return bit < nic.virtio_features.size() && nic.virtio_features[bit] == '1';
}

bool AdminUp(const NetInterface& nic) { return (nic.flags & IFF_UP) != 0; }
bool HasCarrier(const NetInterface& nic) { return nic.operstate == "up"; }

// The ethtool data of a NIC, or why there is none.
const EthtoolInfo* EthtoolOf(const DoctorInputs& in, const std::string& ifname, std::string* why_not) {
  auto it = in.ethtool.find(ifname);
  if (it != in.ethtool.end()) return &it->second;
  *why_not = in.ethtool_unavailable.empty() ? "not queried" : in.ethtool_unavailable;
  return nullptr;
}

// One ethtool answer of a NIC (its ring sizes, its coalescing), or nullptr
// with why there is none added to `unknown`: "eth0: ring sizes: <error>".
template <typename T>
const T* EthtoolPart(const DoctorInputs& in, const NetInterface& nic, const Part<T> EthtoolInfo::*part,
                     std::string_view what, std::vector<std::string>& unknown) {
  std::string why_not;
  const EthtoolInfo* info = EthtoolOf(in, nic.name, &why_not);
  if (!info) {
    unknown.push_back(fmt::format("{}: {}", nic.name, why_not));
    return nullptr;
  }
  const Part<T>& answer = info->*part;
  if (!answer.ok()) {
    unknown.push_back(fmt::format("{}: {}: {}", nic.name, what, answer.error().message));
    return nullptr;
  }
  return &*answer;
}

// Combines per-NIC outcomes: problems make it warn, judged NICs make it ok,
// and when nothing could be judged it is unknown with the reasons.
CheckResult Combine(std::string id, const char* why, const std::vector<std::string>& problems,
                    const std::vector<std::string>& good, const std::vector<std::string>& unknown,
                    const std::string& fix, Verdict problem_verdict = Verdict::kWarn) {
  CheckResult r;
  r.id = std::move(id);
  r.why = why;
  r.details = problems;
  r.details.insert(r.details.end(), good.begin(), good.end());
  r.details.insert(r.details.end(), unknown.begin(), unknown.end());
  if (!problems.empty()) {
    r.verdict = problem_verdict;
    r.saw = JoinLimited(problems, 3);
    if (!good.empty()) r.saw += fmt::format("; fine: {}", JoinLimited(good, 2));
    r.fix = fix;
  } else if (!good.empty()) {
    r.verdict = Verdict::kOk;
    r.saw = JoinLimited(good, 3);
    if (!unknown.empty()) r.saw += fmt::format("; unknown: {}", JoinLimited(unknown, 2));
  } else {
    r.verdict = Verdict::kUnknown;
    r.saw = unknown.empty() ? "nothing to judge" : JoinLimited(unknown, 3);
  }
  return r;
}

}  // namespace

const std::vector<std::string>& WatchedNicCounters() {
  static const std::vector<std::string> kCounters = {
      "rx_errors",      "tx_errors",        "rx_missed_errors", "rx_fifo_errors",  "rx_crc_errors",  "rx_frame_errors",
      "rx_length_errors", "rx_over_errors", "tx_fifo_errors",   "tx_carrier_errors", "tx_aborted_errors"};
  return kCounters;
}

std::optional<double> ParseLinkSpeedGts(std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || v <= 0) return std::nullopt;
  return v;
}

CheckResult CheckNicLink(const DoctorInputs& in) {
  const std::string id = "nic.link";
  const char* why = "a link that negotiated below the NIC's speed (bad cable, optic or switch port) or half "
                    "duplex caps every collective that crosses it";
  auto nics = in.inventory.PhysicalNics();
  if (nics.empty()) return Unknown(id, kNoNic, why);
  std::vector<std::string> problems, good, unknown, fixes;
  for (const NetInterface* nic : nics) {
    if (!AdminUp(*nic)) {
      unknown.push_back(fmt::format("{} is administratively down", nic->name));
      continue;
    }
    if (!HasCarrier(*nic)) {
      unknown.push_back(fmt::format("{}: no carrier (operstate {})", nic->name, nic->operstate));
      continue;
    }
    std::string why_not;
    const EthtoolInfo* info = EthtoolOf(in, nic->name, &why_not);
    std::optional<uint64_t> speed;
    if (nic->speed_mbps) speed = static_cast<uint64_t>(*nic->speed_mbps);
    int duplex = nic->duplex == "full" ? 1 : nic->duplex == "half" ? 0 : -1;  // -1: unknown
    uint64_t max_speed = 0;
    if (info && info->link_modes.ok()) {
      if (!speed && info->link_modes->speed_mbps) speed = *info->link_modes->speed_mbps;
      if (duplex < 0 && info->link_modes->full_duplex) duplex = *info->link_modes->full_duplex ? 1 : 0;
      max_speed = info->link_modes->MaxSupportedSpeed();
    } else if (info) {
      why_not = info->link_modes.error().message;
    }
    if (!speed) {
      unknown.push_back(fmt::format("{} ({}) reports no link speed", nic->name, nic->driver.empty() ? "?" : nic->driver));
      continue;
    }
    if (duplex == 0) {
      problems.push_back(fmt::format("{} runs half duplex at {} Mb/s", nic->name, *speed));
      fixes.push_back(fmt::format("ethtool -s {} autoneg on", nic->name));
      continue;
    }
    if (max_speed == 0) {
      unknown.push_back(fmt::format("{} at {} Mb/s; supported modes unknown ({})", nic->name, *speed,
                                    why_not.empty() ? "the driver lists none" : why_not));
      continue;
    }
    if (*speed < max_speed) {
      problems.push_back(fmt::format("{} at {} Mb/s, the device supports {} Mb/s", nic->name, *speed, max_speed));
      fixes.push_back(fmt::format("check the cable/optic and switch port of {} (ethtool {})", nic->name, nic->name));
    } else {
      good.push_back(fmt::format("{} at {} Mb/s{} (its maximum)", nic->name, *speed, duplex == 1 ? " full duplex" : ""));
    }
  }
  return Combine(id, why, problems, good, unknown, JoinCommands(fixes));
}

CheckResult CheckPcieLink(const DoctorInputs& in) {
  const std::string id = "pcie.link";
  const char* why = "a NIC or GPU whose PCIe link trained below its width or speed (bad slot, riser or "
                    "retimer) moves data at a fraction of its rate";
  std::map<std::string, std::string> labels;
  for (const NetInterface* nic : in.inventory.PhysicalNics()) {
    auto& l = labels[nic->pci_bdf];
    l += (l.empty() ? "" : "/") + nic->name;
  }
  std::vector<std::string> problems, good, unknown, fixes;
  size_t devices = 0;
  for (const auto& d : in.inventory.pci) {
    bool is_nic = d.kind == PciKind::kNic || labels.count(d.bdf);
    if (!is_nic && d.kind != PciKind::kGpu) continue;
    ++devices;
    std::string label = is_nic ? fmt::format("NIC {}", labels.count(d.bdf) ? labels[d.bdf] : d.bdf)
                               : fmt::format("GPU {}", d.bdf);
    if (!d.link) {
      unknown.push_back(fmt::format("{}: no current_link_*/max_link_* in sysfs", label));
      continue;
    }
    const PcieLink& l = *d.link;
    auto cur = ParseLinkSpeedGts(l.current_speed), max = ParseLinkSpeedGts(l.max_speed);
    if (l.max_width <= 0 || !max) {
      unknown.push_back(fmt::format("{}: link maximum unknown ({} x{})", label, l.max_speed, l.max_width));
      continue;
    }
    std::string state = fmt::format("{}: x{} at {} (max x{} at {})", label, l.current_width, l.current_speed,
                                    l.max_width, l.max_speed);
    if (l.current_width > 0 && l.current_width < l.max_width) {
      problems.push_back(state + ": narrower than its maximum");
      fixes.push_back(fmt::format("reseat {} or check its slot/riser (lspci -vv -s {}: LnkSta vs LnkCap)", label, d.bdf));
    } else if (cur && *cur < *max) {
      if (is_nic) {
        problems.push_back(state + ": slower than its maximum");
        fixes.push_back(fmt::format("check {}'s slot and BIOS PCIe settings (lspci -vv -s {})", label, d.bdf));
      } else {
        // GPUs drop their PCIe generation while idle to save power.
        good.push_back(state + " (GPUs slow their link when idle; check under load)");
      }
    } else {
      good.push_back(state);
    }
  }
  if (devices == 0) return Unknown(id, "no NIC or NVIDIA GPU under /sys/bus/pci/devices", why);
  return Combine(id, why, problems, good, unknown, JoinCommands(fixes));
}

CheckResult CheckTxTimeouts(const DoctorInputs& in) {
  const std::string id = "nic.tx_timeout";
  const char* why = "a transmit timeout means a TX queue stopped for seconds and the driver reset the NIC "
                    "(NETDEV WATCHDOG): every flow through it stalled";
  auto nics = in.inventory.PhysicalNics();
  if (nics.empty()) return Unknown(id, kNoNic, why);
  std::vector<std::string> problems, good, unknown;
  bool growing = false;
  for (const NetInterface* nic : nics) {
    auto it = in.Last().tx_timeouts.find(nic->name);
    if (it == in.Last().tx_timeouts.end() || it->second.empty()) {
      unknown.push_back(fmt::format("{}: no queues/tx-*/tx_timeout files", nic->name));
      continue;
    }
    uint64_t total = 0, grew = 0;
    std::vector<std::string> queues;
    for (const auto& [queue, count] : it->second) {
      total += count;
      if (count) queues.push_back(fmt::format("{} {}", queue, count));
      if (in.HasGrowth()) {
        auto first = in.First().tx_timeouts.find(nic->name);
        if (first != in.First().tx_timeouts.end()) {
          auto q = first->second.find(queue);
          if (q != first->second.end() && count > q->second) grew += count - q->second;
        }
      }
    }
    if (total == 0) {
      good.push_back(fmt::format("{}: 0 TX timeouts on {} queues", nic->name, it->second.size()));
      continue;
    }
    growing |= grew > 0;
    problems.push_back(fmt::format("{}: {} TX timeout(s) since boot ({}){}", nic->name, total, JoinLimited(queues, 3),
                                   grew ? fmt::format(", {} during sampling", grew) : ""));
  }
  return Combine(id, why, problems, good, unknown,
                 "look for 'NETDEV WATCHDOG' in dmesg; update the NIC firmware/driver, and drain the node if "
                 "timeouts recur",
                 growing ? Verdict::kFail : Verdict::kWarn);
}

CheckResult CheckNicErrors(const DoctorInputs& in) {
  const std::string id = "nic.errors";
  const char* why = "error and missed-packet counters that grow mean packets are being lost now (ring "
                    "overflow, CRC errors from a bad cable): every loss is a retransmit timeout for a collective";
  auto nics = in.inventory.PhysicalNics();
  if (nics.empty()) return Unknown(id, kNoNic, why);
  std::vector<std::string> problems, good, unknown;
  double seconds = static_cast<double>(in.sample_interval_ns) / 1e9;
  for (const NetInterface* nic : nics) {
    auto last = in.Last().nic_stats.find(nic->name);
    if (last == in.Last().nic_stats.end() || last->second.empty()) {
      unknown.push_back(fmt::format("{}: no statistics under /sys/class/net/{}/statistics", nic->name, nic->name));
      continue;
    }
    std::vector<std::string> totals, grew;
    for (const auto& [counter, value] : last->second) {
      if (value) totals.push_back(fmt::format("{} {}", counter, value));
      if (!in.HasGrowth()) continue;
      auto first = in.First().nic_stats.find(nic->name);
      if (first == in.First().nic_stats.end()) continue;
      auto before = first->second.find(counter);
      if (before != first->second.end() && value > before->second)
        grew.push_back(fmt::format("{} +{}", counter, value - before->second));
    }
    std::string total_text = totals.empty() ? "all error counters 0" : "totals " + JoinLimited(totals, 3);
    if (!in.HasGrowth()) {
      unknown.push_back(fmt::format("{}: {} (growth not sampled: --sample-interval 0)", nic->name, total_text));
    } else if (!grew.empty()) {
      problems.push_back(fmt::format("{}: {} in {:.1f} s", nic->name, JoinLimited(grew, 3), seconds));
    } else {
      good.push_back(fmt::format("{}: nothing grew in {:.1f} s ({})", nic->name, seconds, total_text));
    }
  }
  return Combine(id, why, problems, good, unknown,
                 "rx_missed/fifo: enlarge the RX ring (ethtool -G IF rx MAX) and spread IRQs; crc/frame: replace the "
                 "cable or optic; see ethtool -S IF for the driver's own counters");
}

CheckResult CheckMtu(const DoctorInputs& in) {
  const std::string id = "nic.mtu";
  const char* why = "NICs of one fabric with different MTUs, or an upper device (bond, VLAN) with a larger MTU "
                    "than its lower device, drop or fragment large frames";
  auto nics = in.inventory.PhysicalNics();
  if (nics.empty()) return Unknown(id, kNoNic, why);
  std::vector<std::string> problems, good, unknown, fixes;
  std::map<std::string, std::map<int, std::vector<std::string>>> by_driver;  // driver -> mtu -> names
  for (const NetInterface* nic : nics) {
    if (!nic->mtu) {
      unknown.push_back(fmt::format("{}: mtu unreadable", nic->name));
      continue;
    }
    if (!AdminUp(*nic)) continue;
    by_driver[nic->driver][*nic->mtu].push_back(nic->name);
  }
  for (const auto& [driver, mtus] : by_driver) {
    std::vector<std::string> parts;
    for (const auto& [mtu, names] : mtus) parts.push_back(fmt::format("{} {}", fmt::join(names, ","), mtu));
    std::string text = fmt::format("{} ({})", fmt::join(parts, ", "), driver.empty() ? "?" : driver);
    if (mtus.size() > 1) {
      problems.push_back("different MTUs on one kind of NIC: " + text);
      fixes.push_back(fmt::format("ip link set dev {} mtu {}", mtus.begin()->second.front(), mtus.rbegin()->first));
    } else {
      good.push_back("MTU " + text);
    }
  }
  for (const auto& upper : in.inventory.nics) {
    if (!upper.mtu) continue;
    for (const auto& lower_name : upper.lowers) {
      for (const auto& lower : in.inventory.nics) {
        if (lower.name != lower_name || !lower.mtu || *lower.mtu >= *upper.mtu) continue;
        problems.push_back(fmt::format("{} has MTU {} above its lower device {} ({})", upper.name, *upper.mtu,
                                       lower.name, *lower.mtu));
        fixes.push_back(fmt::format("ip link set dev {} mtu {}", lower.name, *upper.mtu));
      }
    }
  }
  return Combine(id, why, problems, good, unknown, JoinCommands(fixes));
}

CheckResult CheckRings(const DoctorInputs& in) {
  const std::string id = "nic.rings";
  const char* why = "a small RX ring overflows during line-rate bursts (all-reduce traffic is bursty) and the "
                    "NIC drops what does not fit";
  auto nics = in.inventory.PhysicalNics();
  if (nics.empty()) return Unknown(id, kNoNic, why);
  std::vector<std::string> problems, good, unknown, fixes;
  for (const NetInterface* nic : nics) {
    const RingSizes* rings = EthtoolPart(in, *nic, &EthtoolInfo::rings, "ring sizes", unknown);
    if (!rings) continue;
    const RingSizes& r = *rings;
    std::string state = fmt::format("{}: rx {}/{} tx {}/{}", nic->name, r.rx, r.rx_max, r.tx, r.tx_max);
    if (r.rx < r.rx_max && r.rx < kMinRxRing) {
      problems.push_back(state + fmt::format(" (rx below {})", kMinRxRing));
      fixes.push_back(fmt::format("ethtool -G {} rx {}", nic->name, std::min(r.rx_max, 4 * kMinRxRing)));
    } else {
      good.push_back(state);
    }
  }
  return Combine(id, why, problems, good, unknown, JoinCommands(fixes));
}

CheckResult CheckCoalesce(const DoctorInputs& in) {
  const std::string id = "nic.coalesce";
  const char* why = "without RX interrupt coalescing every packet raises an interrupt (and a softirq) on its "
                    "CPU; with a very long delay small messages wait for it";
  auto nics = in.inventory.PhysicalNics();
  if (nics.empty()) return Unknown(id, kNoNic, why);
  std::vector<std::string> problems, good, unknown, fixes;
  for (const NetInterface* nic : nics) {
    const Coalesce* coalesce = EthtoolPart(in, *nic, &EthtoolInfo::coalesce, "coalescing", unknown);
    if (!coalesce) continue;
    if (nic->driver == "virtio_net" && !HasVirtioFeature(*nic, kVirtioNetFNotfCoal)) {
      unknown.push_back(fmt::format("{} (virtio_net): the device offers no notification coalescing "
                                    "(VIRTIO_NET_F_NOTF_COAL); the hypervisor moderates its interrupts",
                                    nic->name));
      continue;
    }
    const Coalesce& c = *coalesce;
    if (c.adaptive_rx && *c.adaptive_rx) {
      good.push_back(fmt::format("{}: adaptive RX coalescing", nic->name));
      continue;
    }
    if (!c.rx_usecs && !c.rx_max_frames) {
      unknown.push_back(fmt::format("{}: the driver reports no RX coalescing parameters", nic->name));
      continue;
    }
    uint32_t usecs = c.rx_usecs.value_or(0), frames = c.rx_max_frames.value_or(0);
    std::string state = fmt::format("{}: rx-usecs {} rx-frames {}", nic->name,
                                    c.rx_usecs ? std::to_string(usecs) : "n/a",
                                    c.rx_max_frames ? std::to_string(frames) : "n/a");
    if (usecs == 0 && frames <= 1) {
      problems.push_back(state + " (an interrupt per packet)");
      fixes.push_back(fmt::format("ethtool -C {} adaptive-rx on (or rx-usecs 8)", nic->name));
    } else if (usecs > kMaxRxUsecs) {
      problems.push_back(state + fmt::format(" (delays each packet up to {} us)", usecs));
      fixes.push_back(fmt::format("ethtool -C {} rx-usecs 32", nic->name));
    } else {
      good.push_back(state);
    }
  }
  return Combine(id, why, problems, good, unknown, JoinCommands(fixes));
}

}  // namespace gpunoise::doctor
