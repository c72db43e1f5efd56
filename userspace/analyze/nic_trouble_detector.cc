#include "analyze/nic_trouble_detector.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyze/attribution.h"
#include "analyze/format_util.h"
#include "model/events.h"
#include "model/net_events.h"

namespace gpunoise::analyze {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Counts per window of `len` across [from, to): the worst window's count
// and where it starts.
struct RateWindow {
  uint64_t start = 0;
  uint64_t count = 0;
};
RateWindow WorstWindow(const std::vector<uint64_t>& times, uint64_t len) {
  RateWindow best;
  size_t lo = 0;
  for (size_t hi = 0; hi < times.size(); ++hi) {
    while (times[hi] - times[lo] >= len) ++lo;
    uint64_t n = hi - lo + 1;
    if (n > best.count) best = {times[lo], n};
  }
  return best;
}

Finding Base(std::string kind, std::string device) {
  Finding f;
  f.detector = "nic_trouble";
  f.kind = std::move(kind);
  f.device = std::move(device);
  f.culprit = f.device.empty() ? "network stack" : f.device;
  f.culprit_kind = "device";
  return f;
}

}  // namespace

std::string KernelHealthCounterKind(std::string_view track_name) {
  std::string n = Lower(track_name);
  for (std::string_view k : {"softlockup", "hardlockup", "rcu_stall", "rcu stall", "warn_count", "oops_count",
                             "warn count", "oops count"})
    if (n.find(k) != std::string::npos) {
      std::string kind(k);
      std::replace(kind.begin(), kind.end(), ' ', '_');
      return kind;
    }
  return {};
}

std::vector<Finding> DetectNicTrouble(const AnalysisContext& ctx) {
  std::vector<Finding> out;
  const Timeline& t = ctx.t();
  const uint64_t window = std::max<uint64_t>(1000000, ctx.th().GetNs("nic.window"));
  const double window_s = static_cast<double>(window) / 1e9;

  // Events of interest, grouped.
  std::map<std::pair<std::string, int32_t>, std::vector<uint64_t>> timeouts, stalls;  // device, queue
  std::map<std::pair<std::string, uint32_t>, std::vector<uint64_t>> full_polls;       // device, cpu
  std::map<std::pair<std::string, uint32_t>, uint64_t> polls;
  std::map<std::pair<std::string, std::string>, std::vector<uint64_t>> drops;  // reason, device
  for (const NetRecord& e : t.net.events) {
    if (e.ts < ctx.from || e.ts >= ctx.to) continue;
    std::string dev(t.net.Name(e.device));
    switch (static_cast<model::NetEventKind>(e.kind)) {
      case model::NetEventKind::kTxTimeout: timeouts[{dev, e.queue}].push_back(e.ts); break;
      case model::NetEventKind::kDqlStall: stalls[{dev, e.queue}].push_back(e.ts); break;
      case model::NetEventKind::kNapiPoll:
        polls[{dev, e.cpu}]++;
        if (e.budget > 0 && e.value >= e.budget) full_polls[{dev, e.cpu}].push_back(e.ts);
        break;
      case model::NetEventKind::kDrop: {
        std::string reason(t.net.Name(e.reason));
        if (reason.empty()) reason = "unknown reason";
        drops[{reason, dev}].push_back(e.ts);
        break;
      }
      default: break;
    }
  }

  for (const auto& [key, times] : timeouts) {
    Finding f = Base("tx_timeout", key.first);
    f.queue = key.second;
    f.start = times.front();
    f.end = times.back();
    f.title = fmt::format("TX watchdog fired {} times on {}{}: the NIC or its driver stopped sending",
                          times.size(), key.first.empty() ? "a device" : key.first,
                          key.second >= 0 ? fmt::format(" queue {}", key.second) : "");
    f.metrics = {{"count", static_cast<double>(times.size())}};
    f.evidence.push_back(fmt::format("net_dev_xmit_timeout at {} (first) and {} (last)",
                                     FormatOffset(times.front(), t.start_ts), FormatOffset(times.back(), t.start_ts)));
    out.push_back(std::move(f));
  }
  for (const auto& [key, times] : stalls) {
    Finding f = Base("dql_stall", key.first);
    f.queue = key.second;
    f.start = times.front();
    f.end = times.back();
    f.title = fmt::format("{} DQL stalls{}{}: a TX queue stopped completing", times.size(),
                          key.first.empty() ? "" : " on " + key.first,
                          key.second >= 0 ? fmt::format(" queue {}", key.second) : "");
    f.metrics = {{"count", static_cast<double>(times.size())}};
    f.evidence.push_back(fmt::format("dql_stall_detected first at {}", FormatOffset(times.front(), t.start_ts)));
    out.push_back(std::move(f));
  }
  const double full_rate = ctx.th().Get("nic.full_budget_rate");
  for (const auto& [key, times] : full_polls) {
    RateWindow w = WorstWindow(times, window);
    double rate = static_cast<double>(w.count) / window_s;
    if (rate < full_rate || w.count == 0) continue;
    Finding f = Base("napi_full_budget", key.first);
    f.cpus = {key.second};
    f.start = times.front();
    f.end = times.back();
    f.title = fmt::format("NAPI on {} used its whole budget {} times on CPU {} (peak {:.0f}/s): more packets than "
                          "one softirq pass can take",
                          key.first.empty() ? "a device" : key.first, times.size(), key.second, rate);
    f.metrics = {{"full_budget_polls", static_cast<double>(times.size())},
                 {"polls", static_cast<double>(polls[key])},
                 {"peak_rate", rate}};
    f.windows.push_back({w.start, w.start + window, 0, fmt::format("{} full-budget polls", w.count)});
    f.evidence.push_back(fmt::format("{} of {} polls on CPU {} used the full budget", times.size(), polls[key],
                                     key.second));
    out.push_back(std::move(f));
  }
  const double drop_rate = ctx.th().Get("nic.drop_rate");
  for (const auto& [key, times] : drops) {
    RateWindow w = WorstWindow(times, window);
    double rate = static_cast<double>(w.count) / window_s;
    if (rate < drop_rate) continue;
    Finding f = Base("drops", key.second);
    f.culprit = key.second.empty() ? fmt::format("drops ({})", key.first) : key.second;
    f.start = times.front();
    f.end = times.back();
    f.title = fmt::format("{} packets dropped for {}{} (peak {:.0f}/s)", times.size(), key.first,
                          key.second.empty() ? "" : " on " + key.second, rate);
    f.metrics = {{"drops", static_cast<double>(times.size())}, {"peak_rate", rate}};
    f.windows.push_back({w.start, w.start + window, 0, fmt::format("{} drops", w.count)});
    f.evidence.push_back(fmt::format("kfree_skb reason {}: {} drops", key.first, times.size()));
    out.push_back(std::move(f));
  }

  // NIC queue IRQs served on CPUs where focus threads ran.
  std::set<uint32_t> focus_cpus;
  for (const auto& [tid, act] : ctx.activities)
    for (const ThreadRun& r : act.runs) focus_cpus.insert(r.cpu);
  const uint64_t min_irqs = static_cast<uint64_t>(ctx.th().Get("nic.irq_overlap_min"));
  std::map<std::string, std::map<uint32_t, std::pair<uint64_t, uint64_t>>> by_device;  // device -> cpu -> count, ns
  std::map<std::string, std::set<int32_t>> device_irqs;
  for (uint32_t cpu : focus_cpus) {
    if (cpu >= t.cpus.size()) continue;
    for (const IntrSlice& s : t.cpus[cpu].hardirqs) {
      if (s.start < ctx.from || s.start >= ctx.to) continue;
      auto it = ctx.nic_irqs.find(s.id);
      if (it == ctx.nic_irqs.end()) continue;
      auto& slot = by_device[it->second.device][cpu];
      slot.first++;
      slot.second += s.end - s.start;
      device_irqs[it->second.device].insert(s.id);
    }
  }
  for (const auto& [device, per_cpu] : by_device) {
    uint64_t count = 0, ns = 0;
    for (const auto& [cpu, cn] : per_cpu) {
      count += cn.first;
      ns += cn.second;
    }
    if (count < min_irqs) continue;
    Finding f = Base("irq_affinity_overlap", device);
    for (const auto& [cpu, _] : per_cpu) f.cpus.push_back(cpu);
    // What those IRQs and the network softirqs they raise cost the focus
    // threads on those CPUs.
    uint64_t cost = 0;
    const std::set<int32_t>& irqs = device_irqs[device];
    for (const auto& [tid, act] : ctx.activities) {
      uint64_t hit = 0;
      auto charge = [&](const Breakdown& bd) {
        for (const auto& [who, v] : bd)
          if ((who.kind == Culprit::Kind::kHardirq && irqs.count(who.id)) ||
              (who.kind == Culprit::Kind::kSoftirq &&
               (who.id == static_cast<int32_t>(model::SoftirqVec::kNetRx) ||
                who.id == static_cast<int32_t>(model::SoftirqVec::kNetTx))))
            hit += v;
      };
      for (const ThreadRun& r : act.runs) {
        if (!per_cpu.count(r.cpu)) continue;
        Breakdown bd;
        AttributeInterrupts(t, r.cpu, r.start, r.end, &bd);
        charge(bd);
      }
      for (const ThreadWait& w : act.waits) {
        if (!per_cpu.count(w.cpu)) continue;
        Breakdown bd;
        AttributeCpu(t, w.cpu, w.start, w.end, &bd);
        Breakdown interrupts_only;
        for (const auto& [who, v] : bd)
          if (who.kind != Culprit::Kind::kTask) interrupts_only[who] = v;
        charge(interrupts_only);
      }
      if (hit) f.focus_tids.push_back(tid);
      cost += hit;
    }
    f.cost_ns = cost;
    f.cost_share = static_cast<double>(cost) / static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));
    f.start = ctx.from;
    f.end = ctx.to;
    std::string irq_list;
    for (int32_t irq : irqs) irq_list += (irq_list.empty() ? "" : ", ") + t.IrqName(irq);
    f.title = fmt::format("{} queue interrupts ({} of them, {}) were served on CPU {}, which run{} focus threads", device,
                          count, FormatNs(ns), JoinCpus(f.cpus), f.cpus.size() == 1 ? "s" : "");
    f.metrics = {{"irqs", static_cast<double>(count)}, {"irq_ns", static_cast<double>(ns)}};
    f.evidence.push_back("IRQs: " + irq_list);
    for (const auto& [cpu, cn] : per_cpu)
      f.evidence.push_back(fmt::format("CPU {}: {} interrupts, {}", cpu, cn.first, FormatNs(cn.second)));
    f.evidence.push_back("move them off the focus CPUs (smp_affinity, or irqbalance --banirq); see gpunoise doctor");
    out.push_back(std::move(f));
  }

  // Kernel health counters that rose during the recording.
  for (const auto& [uuid, samples] : t.tracks.counters) {
    auto track = t.tracks.tracks.find(uuid);
    if (track == t.tracks.tracks.end() || samples.empty()) continue;
    std::string kind = KernelHealthCounterKind(track->second.name);
    bool timeouts_counter = Lower(track->second.name).find("timeout") != std::string::npos;
    if (kind.empty() && !timeouts_counter) continue;
    double first = samples.front().value, peak = first;
    uint64_t when = 0;
    for (const auto& s : samples)
      if (s.value > peak) {
        peak = s.value;
        if (!when) when = s.ts;
      }
    if (peak <= first) continue;
    Finding f = Base(kind.empty() ? "tx_timeout" : "kernel_health", "");
    f.culprit = kind.empty() ? t.tracks.TrackPath(uuid) : "kernel";
    f.culprit_kind = kind.empty() ? "device" : "kernel";
    f.start = when;
    f.end = samples.back().ts;
    f.title = fmt::format("counter '{}' rose from {:g} to {:g} during the recording", t.tracks.TrackPath(uuid), first, peak);
    f.metrics = {{"increase", peak - first}};
    f.evidence.push_back(kind.empty() ? "a rising TX-timeout counter means the TX watchdog fired"
                                      : "the kernel counted a " + kind + " event: see dmesg for the report");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpunoise::analyze
