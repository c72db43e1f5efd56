#include "analyze/nic_health_detector.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyze/attribution.h"
#include "analyze/format_util.h"
#include "analyze/nic_metadata.h"
#include "model/events.h"
#include "model/link_kernel_log.h"

namespace gpunoise::analyze {
namespace {

using model::NicCounterKind;

Finding Base(std::string kind, std::string device) {
  Finding f;
  f.detector = "nic_trouble";
  f.kind = std::move(kind);
  f.device = std::move(device);
  f.culprit = f.device.empty() ? "PCIe" : f.device;
  f.culprit_kind = "device";
  return f;
}

std::string At(const AnalysisContext& ctx, uint64_t ts) { return FormatOffset(ts, ctx.from); }

// The kernel log lines of each link event (model/link_kernel_log.h), by
// the event's index in nic.link_events.
std::map<size_t, std::vector<const model::KernelLogEntry*>> KernelLinesOf(const AnalysisContext& ctx,
                                                                          const NicMetadata& nic) {
  std::map<std::string, std::string> bus;
  for (const NicDevice& d : nic.devices)
    if (!d.bus_info.empty()) bus[d.device] = d.bus_info;
  const auto& log = ctx.t().kernel_log;
  auto window = static_cast<uint64_t>(ctx.th().Get("nic.link_log_window"));
  std::map<size_t, std::vector<const model::KernelLogEntry*>> out;
  for (const auto& m : model::JoinLinkKernelLog(nic.link_events, log, bus, window))
    out[m.event].push_back(&log[m.entry]);
  return out;
}

using KernelLines = std::map<size_t, std::vector<const model::KernelLogEntry*>>;

void LinkFlaps(const AnalysisContext& ctx, const NicMetadata& nic, const KernelLines& lines,
               std::vector<Finding>& out) {
  std::map<std::string, std::vector<const model::LinkEvent*>> by_device;
  for (const auto& e : nic.link_events)
    if (e.kind == model::LinkEventKind::kCarrierDown || e.kind == model::LinkEventKind::kCarrierUp)
      by_device[e.device].push_back(&e);
  for (const auto& [device, events] : by_device) {
    uint64_t downs = 0, ups = 0, longest = 0, down_since = 0, kernel_lines = 0;
    Finding f = Base("link_flap", device);
    f.start = events.front()->ts;
    f.end = events.back()->ts;
    for (const auto* e : events) {
      if (e->kind == model::LinkEventKind::kCarrierDown) {
        ++downs;
        down_since = e->ts;
      } else {
        ++ups;
        if (down_since) {
          longest = std::max(longest, e->ts - down_since);
          f.windows.push_back({down_since, e->ts, 0, fmt::format("carrier down for {}", FormatNs(e->ts - down_since))});
        }
        down_since = 0;
      }
      f.evidence.push_back(fmt::format("{} {}: carrier {} (operstate {}, carrier_changes {}, from {})", At(ctx, e->ts),
                                       device, e->carrier ? "up" : "down", e->operstate.empty() ? "?" : e->operstate,
                                       e->carrier_changes, e->source));
      // What the kernel logged about the device around the change: the
      // driver's reason, a bridge or bond reacting.
      auto l = lines.find(static_cast<size_t>(e - nic.link_events.data()));
      if (l == lines.end()) continue;
      for (const model::KernelLogEntry* k : l->second) {
        ++kernel_lines;
        f.evidence.push_back(fmt::format("  {} kernel: {}", At(ctx, k->ts), k->text));
      }
    }
    if (downs == 0) continue;  // a link that only came up is not a flap
    if (down_since) f.windows.push_back({down_since, std::max(ctx.to, down_since), 0, "carrier still down at the end"});
    const NicDevice* d = nic.Device(device);
    f.title = fmt::format("{}: link went down {} time{} during the recording{}", device, downs, downs == 1 ? "" : "s",
                          down_since ? " and stayed down" : fmt::format(" (longest down {})", FormatNs(longest)));
    f.metrics = {{"downs", static_cast<double>(downs)},
                 {"ups", static_cast<double>(ups)},
                 {"longest_down_ns", static_cast<double>(longest)},
                 {"carrier_changes", d ? static_cast<double>(d->carrier_changes) : static_cast<double>(downs + ups)},
                 {"kernel_lines", static_cast<double>(kernel_lines)}};
    out.push_back(std::move(f));
  }
}

std::string Mbps(uint64_t mbps) {
  return mbps >= 1000 ? fmt::format("{:g} Gb/s", static_cast<double>(mbps) / 1000) : fmt::format("{} Mb/s", mbps);
}

// A link that renegotiated to a lower speed (a 100G port now at 25G: every
// collective crossing it is capped) or to half duplex during the recording.
void LinkDownshift(const AnalysisContext& ctx, const NicMetadata& nic, const KernelLines& lines,
                   std::vector<Finding>& out) {
  std::map<std::string, std::vector<size_t>> by_device;
  for (size_t i = 0; i < nic.link_events.size(); ++i) {
    auto k = nic.link_events[i].kind;
    if (k == model::LinkEventKind::kSpeedChange || k == model::LinkEventKind::kDuplexChange ||
        k == model::LinkEventKind::kAutonegChange)
      by_device[nic.link_events[i].device].push_back(i);
  }
  for (const auto& [device, idx] : by_device) {
    Finding f = Base("link_downshift", device);
    uint64_t downshifts = 0, from = 0, lowest = 0, end_speed = 0, first = 0, recovered = 0;
    bool half = false;
    for (size_t i : idx) {
      const model::LinkEvent& e = nic.link_events[i];
      if (e.kind == model::LinkEventKind::kSpeedChange) {
        end_speed = e.current;
        if (e.current < e.previous) {
          ++downshifts;
          if (!from) from = e.previous;
          lowest = lowest ? std::min(lowest, e.current) : e.current;
          if (!first) first = e.ts;
          recovered = 0;
        } else if (from && e.current >= from) {
          recovered = e.ts;
        }
        f.evidence.push_back(fmt::format("{} {}: speed {} -> {}", At(ctx, e.ts), device, Mbps(e.previous),
                                         Mbps(e.current)));
      } else if (e.kind == model::LinkEventKind::kDuplexChange) {
        if (e.duplex == "half") {
          half = true;
          ++downshifts;
          if (!first) first = e.ts;
        }
        f.evidence.push_back(
            fmt::format("{} {}: duplex {} -> {}", At(ctx, e.ts), device, e.previous_duplex, e.duplex));
      } else {
        f.evidence.push_back(fmt::format("{} {}: autonegotiation {} -> {}", At(ctx, e.ts), device,
                                         e.previous_autoneg, e.autoneg));
      }
      if (auto l = lines.find(i); l != lines.end())
        for (const model::KernelLogEntry* k : l->second)
          f.evidence.push_back(fmt::format("  {} kernel: {}", At(ctx, k->ts), k->text));
    }
    if (!downshifts) continue;  // speeds that only rose (a link coming up to its full rate)
    f.start = first;
    f.end = recovered ? recovered : std::max(ctx.to, first);
    std::string what = lowest ? fmt::format("link speed fell from {} to {}", Mbps(from), Mbps(lowest))
                              : std::string("link fell to half duplex");
    if (lowest && half) what += " and half duplex";
    f.title = fmt::format("{}: {} at {}{}", device, what, At(ctx, first),
                          recovered ? fmt::format(" (back to {} at {})", Mbps(end_speed), At(ctx, recovered))
                                    : std::string(" and stayed there"));
    f.metrics = {{"downshifts", static_cast<double>(downshifts)},
                 {"from_mbps", static_cast<double>(from)},
                 {"lowest_mbps", static_cast<double>(lowest)},
                 {"end_mbps", static_cast<double>(end_speed)},
                 {"half_duplex", half ? 1.0 : 0.0}};
    out.push_back(std::move(f));
  }
}

// Counters that went back down: the device or one of its queues was reset
// (a firmware reset, a TX-timeout recovery, a driver reload). One reset
// takes many counters down in the same reading, so the events of one
// reading count as one reset.
void NicReset(const AnalysisContext& ctx, const NicMetadata& nic, const KernelLines& lines,
              std::vector<Finding>& out) {
  std::map<std::string, std::map<uint64_t, std::vector<size_t>>> by_device;  // device -> reading time -> events
  for (size_t i = 0; i < nic.link_events.size(); ++i)
    if (nic.link_events[i].kind == model::LinkEventKind::kCounterReset)
      by_device[nic.link_events[i].device][nic.link_events[i].ts].push_back(i);
  for (const auto& [device, resets] : by_device) {
    Finding f = Base("nic_counter_reset", device);
    f.start = resets.begin()->first;
    f.end = resets.rbegin()->first;
    size_t counters = 0;
    for (const auto& [ts, idx] : resets) {
      counters += idx.size();
      std::string names;
      for (size_t k = 0; k < idx.size() && k < 4; ++k)
        names += (names.empty() ? "" : ", ") + nic.link_events[idx[k]].counter;
      if (idx.size() > 4) names += fmt::format(" and {} more", idx.size() - 4);
      f.evidence.push_back(fmt::format("{} {}: {} counter{} went back down ({})", At(ctx, ts), device, idx.size(),
                                       idx.size() == 1 ? "" : "s", names));
      std::set<uint64_t> seen;  // a line joined to several counters of one reset is quoted once
      for (size_t i : idx)
        if (auto l = lines.find(i); l != lines.end())
          for (const model::KernelLogEntry* k : l->second)
            if (seen.insert(k->seq).second)
              f.evidence.push_back(fmt::format("  {} kernel: {}", At(ctx, k->ts), k->text));
    }
    f.title = fmt::format("{}: the NIC's counters went back down {} time{} (a device or queue reset), first at {}",
                          device, resets.size(), resets.size() == 1 ? "" : "s", At(ctx, f.start));
    f.metrics = {{"resets", static_cast<double>(resets.size())}, {"counters", static_cast<double>(counters)}};
    out.push_back(std::move(f));
  }
}

void PcieDegraded(const AnalysisContext& ctx, const NicMetadata& nic, std::vector<Finding>& out) {
  for (const PcieLink& p : nic.pcie) {
    const auto& s = p.state;
    std::vector<std::string> why;
    if (s.degraded_width()) why.push_back(fmt::format("runs at x{} of x{} lanes", s.width, s.max_width));
    // GPUs lower their link speed when idle (power management), so only a
    // NIC's speed below its maximum counts.
    if (s.role == "nic" && s.degraded_speed())
      why.push_back(fmt::format("runs at {:g} of {:g} GT/s", s.speed_gts, s.max_speed_gts));
    uint64_t retrains = 0;
    for (const auto& r : nic.retrains)
      if (r.address == s.address && (r.width != r.previous_width || s.role == "nic")) ++retrains;
    if (retrains) why.push_back(fmt::format("retrained {} time{} during the recording", retrains, retrains == 1 ? "" : "s"));
    uint64_t aer = p.aer_correctable_rise + p.aer_nonfatal_rise + p.aer_fatal_rise;
    if (aer)
      why.push_back(fmt::format("reported {} AER errors ({} correctable, {} non-fatal, {} fatal)", aer,
                                p.aer_correctable_rise, p.aer_nonfatal_rise, p.aer_fatal_rise));
    if (why.empty()) continue;
    std::string who = s.role + " " + s.address + (s.device.empty() ? "" : " (" + s.device + ")");
    Finding f = Base("pcie_degraded", s.role == "nic" ? s.device : std::string());
    f.culprit = who;
    f.start = ctx.from;
    f.end = ctx.to;
    std::string text;
    for (const auto& w : why) text += (text.empty() ? "" : ", ") + w;
    f.title = fmt::format("PCIe link of {} {}", who, text);
    f.metrics = {{"width", static_cast<double>(s.width)},
                 {"max_width", static_cast<double>(s.max_width)},
                 {"speed_gts", s.speed_gts},
                 {"max_speed_gts", s.max_speed_gts},
                 {"retrains", static_cast<double>(retrains)},
                 {"aer_correctable", static_cast<double>(p.aer_correctable_rise)},
                 {"aer_nonfatal", static_cast<double>(p.aer_nonfatal_rise)},
                 {"aer_fatal", static_cast<double>(p.aer_fatal_rise)}};
    for (const auto& r : nic.retrains)
      if (r.address == s.address)
        f.evidence.push_back(fmt::format("{} retrained: x{} {:g} GT/s -> x{} {:g} GT/s", At(ctx, r.ts), r.previous_width,
                                         r.previous_speed_gts, r.width, r.speed_gts));
    out.push_back(std::move(f));
  }
}

// The CPUs that serve a device's receive queue (all its receive queues for
// queue -1): the IRQ map first, else where its NAPI polls ran.
std::vector<uint32_t> QueueCpus(const NetMetadata& net, const std::string& device, int32_t queue) {
  std::vector<uint32_t> cpus;
  for (const NetIrq& irq : net.irqs) {
    if (irq.device != device || irq.queue_kind == "control" || irq.queue_kind == "tx") continue;
    if (queue >= 0 && irq.queue != queue) continue;
    const auto& set = irq.effective_affinity.empty() ? irq.affinity : irq.effective_affinity;
    if (!set.empty()) cpus.push_back(set.front());
  }
  if (cpus.empty())
    for (const NapiInstance& n : net.napi)
      if (n.device == device && (queue < 0 || n.queue == queue) && n.packets) cpus.push_back(n.cpu);
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

uint64_t NetRxNs(const Timeline& t, uint32_t cpu, uint64_t a, uint64_t b) {
  if (cpu >= t.cpus.size()) return 0;
  uint64_t ns = 0;
  for (const IntrSlice& s : t.cpus[cpu].softirqs)
    if (s.id == static_cast<int32_t>(model::SoftirqVec::kNetRx)) ns += Overlap(s.start, s.end, a, b);
  return ns;
}

void Saturation(const AnalysisContext& ctx, const NicMetadata& nic, std::vector<Finding>& out) {
  const Timeline& t = ctx.t();
  const double min_rate = ctx.th().Get("nic.saturation_drop_rate");
  const double budget_share = ctx.th().Get("softirq.share");
  // Receive drops the NIC or its driver counted, per device and queue.
  // A driver that counts a kind per queue and also sums it for the device
  // (virtio_net rx0_drops and rx_drops) is judged by its queues.
  auto is_drop = [](const NicRateTrack& r) {
    return r.kind == NicCounterKind::kRxMissed || r.kind == NicCounterKind::kRxNicDiscard ||
           r.kind == NicCounterKind::kRxDrop;
  };
  std::set<std::pair<std::string, NicCounterKind>> per_queue;
  for (const NicRateTrack& r : nic.rates)
    if (is_drop(r) && r.queue >= 0) per_queue.insert({r.device, r.kind});
  std::map<std::pair<std::string, int32_t>, std::vector<const NicRateTrack*>> tracks;
  for (const NicRateTrack& r : nic.rates)
    if (is_drop(r) && (r.queue >= 0 || !per_queue.count({r.device, r.kind})))
      tracks[{r.device, r.queue}].push_back(&r);
  for (const auto& [key, list] : tracks) {
    const auto& [device, queue] = key;
    std::vector<uint32_t> cpus = QueueCpus(ctx.net, device, queue);
    Finding f = Base("nic_saturation", device);
    f.queue = queue;
    double drops = 0, peak = 0, worst_netrx = 0;
    uint64_t budget_windows = 0, busy_windows = 0;
    bool cpu_data = false;
    std::map<std::string, uint64_t> busy_with;
    std::vector<std::pair<double, FindingWindow>> windows;
    std::string counters;
    for (const NicRateTrack* r : list) counters += (counters.empty() ? "" : ", ") + r->counter;
    for (const NicRateTrack* r : list) {
      const auto& s = *r->samples;
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        uint64_t a = std::max(s[i].ts, ctx.from), b = std::min(s[i + 1].ts, ctx.to);
        if (b <= a || s[i].value < min_rate) continue;
        double n = s[i].value * static_cast<double>(b - a) / 1e9;
        drops += n;
        peak = std::max(peak, s[i].value);
        if (!f.start || a < f.start) f.start = a;
        f.end = std::max(f.end, b);
        // What the serving CPUs did in this interval.
        std::string note = fmt::format("{:.0f} drops ({})", n, r->counter);
        double best_share = -1;
        for (uint32_t cpu : cpus) {
          if (cpu >= t.cpus.size() || !t.cpus[cpu].has_data()) continue;
          cpu_data = true;
          double share = static_cast<double>(NetRxNs(t, cpu, a, b)) / static_cast<double>(b - a);
          if (share <= best_share) continue;
          best_share = share;
          worst_netrx = std::max(worst_netrx, share);
          if (share >= budget_share) {
            note = fmt::format("{}: NET_RX at its budget on CPU {} ({})", note, cpu, FormatShare(share));
          } else {
            Breakdown bd;
            AttributeCpu(t, cpu, a, b, &bd);
            auto ranked = Ranked(bd);
            std::string other;
            for (const auto& [c, ns] : ranked) {
              if (c.kind == Culprit::Kind::kIdle || c.kind == Culprit::Kind::kUnknown) continue;
              if (c.kind == Culprit::Kind::kSoftirq && c.id == static_cast<int32_t>(model::SoftirqVec::kNetRx)) continue;
              if (static_cast<double>(ns) < 0.5 * static_cast<double>(b - a)) break;
              other = DescribeCulprit(t, c);
              busy_with[other] += ns;
              break;
            }
            note = other.empty() ? fmt::format("{}: CPU {} was not busy (NET_RX {})", note, cpu, FormatShare(share))
                                 : fmt::format("{}: CPU {} ran {} (NET_RX {})", note, cpu, other, FormatShare(share));
          }
        }
        if (best_share >= budget_share) ++budget_windows;
        else if (!busy_with.empty()) ++busy_windows;
        windows.push_back({n, {a, b, 0, note}});
      }
    }
    if (drops < 1) continue;
    std::stable_sort(windows.begin(), windows.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (size_t i = 0; i < windows.size() && i < 5; ++i) f.windows.push_back(windows[i].second);
    f.cpus = cpus;
    std::string where = queue >= 0 ? fmt::format("queue {}", queue) : std::string("its queues");
    std::string why;
    if (budget_windows) {
      why = fmt::format("NET_RX on {} was at its budget", cpus.empty() ? std::string("the serving CPU") : CpuPhrase(cpus));
    } else if (!busy_with.empty()) {
      auto top = std::max_element(busy_with.begin(), busy_with.end(),
                                  [](const auto& x, const auto& y) { return x.second < y.second; });
      why = fmt::format("{} ran {}", CpuPhrase(cpus), top->first);
      f.culprit = top->first;
      f.culprit_kind = "task";
    } else if (cpus.empty()) {
      why = "the CPU serving it is not known (no IRQ map or NAPI data)";
    } else if (!cpu_data) {
      why = fmt::format("the recording has no scheduler data for {} (record with -e sched,irq,softirq)",
                        CpuPhrase(cpus));
    } else {
      why = fmt::format("{} had time to spare (ring too small or interrupt moderation?)", CpuPhrase(cpus));
    }
    f.title = fmt::format("{}: the NIC dropped {:.0f} packets because the host did not drain {} ({}); {}", device,
                          drops, where, counters, why);
    f.metrics = {{"drops", drops},
                 {"peak_drops_per_s", peak},
                 {"netrx_share", worst_netrx},
                 {"budget_windows", static_cast<double>(budget_windows)},
                 {"busy_windows", static_cast<double>(busy_windows)}};
    out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> DetectNicHealth(const AnalysisContext& ctx) {
  std::vector<Finding> out;
  NicMetadata nic = ReadNicMetadata(ctx.t(), ctx.net);
  KernelLines lines = KernelLinesOf(ctx, nic);
  LinkFlaps(ctx, nic, lines, out);
  LinkDownshift(ctx, nic, lines, out);
  NicReset(ctx, nic, lines, out);
  PcieDegraded(ctx, nic, out);
  Saturation(ctx, nic, out);
  return out;
}

}  // namespace gpunoise::analyze
