#include "analyze/nic_trouble_detector.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyze/attribution.h"
#include "analyze/format_util.h"
#include "analyze/kernel_log_findings.h"
#include "analyze/net_metadata.h"
#include "analyze/nic_trouble_core.h"
#include "analyze/tx_timeout_log.h"
#include "model/events.h"
#include "model/kernel_log.h"
#include "model/net_trace_event.h"
#include "common/strings.h"

namespace gpunoise::analyze {
namespace {

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

Finding Base(std::string_view kind, const std::string& device) { return NicTroubleFinding(kind, device); }

}  // namespace

std::string KernelHealthKind(std::string_view counter) {
  // "rcu_stall_count" -> "rcu_stall"; "warn_count" and "oops_count" keep
  // their suffix (the kernel's own word for them, "a warn_count event").
  if (counter == "warn_count" || counter == "oops_count") return std::string(counter);
  if (counter.ends_with("_count")) counter.remove_suffix(6);
  return std::string(counter);
}

std::vector<Finding> DetectNicTrouble(const AnalysisContext& ctx) {
  std::vector<Finding> out;
  const Timeline& t = ctx.t();
  const uint64_t window = std::max<uint64_t>(1000000, ctx.th().GetNs("nic.window"));
  const NicTroubleRule rule = NicTroubleRule::From(ctx.th());

  // Events of interest, grouped.
  std::map<std::pair<std::string, int32_t>, std::vector<uint64_t>> timeouts, stalls;  // device, queue
  std::map<std::pair<std::string, uint32_t>, std::vector<uint64_t>> full_polls;       // device, cpu
  std::map<std::pair<std::string, uint32_t>, uint64_t> polls;
  std::map<std::pair<std::string, std::string>, std::vector<uint64_t>> drops;  // reason, device
  for (const NetRecord& e : t.net.events) {
    if (e.ts < ctx.from || e.ts >= ctx.to) continue;
    std::string dev(t.net.Name(e.device));
    switch (static_cast<model::NetTraceKind>(e.kind)) {
      case model::NetTraceKind::kTxTimeout: timeouts[{dev, e.queue}].push_back(e.ts); break;
      case model::NetTraceKind::kDqlStall: stalls[{dev, e.queue}].push_back(e.ts); break;
      case model::NetTraceKind::kNapiPoll:
        polls[{dev, e.cpu}]++;
        if (e.budget > 0 && e.value >= e.budget) full_polls[{dev, e.cpu}].push_back(e.ts);
        break;
      case model::NetTraceKind::kDrop: {
        std::string reason(t.net.Name(e.reason));
        if (reason.empty()) reason = "unknown reason";
        drops[{reason, dev}].push_back(e.ts);
        break;
      }
      default: break;
    }
  }

  // TX timeouts per device: events (always recorded), the cumulative
  // tx timeouts counter, or the end-of-recording totals.
  std::map<std::string, uint64_t> timeout_count;
  std::map<std::string, std::pair<uint64_t, uint64_t>> timeout_span;
  std::map<std::string, std::set<int32_t>> timeout_queues;
  for (const auto& [key, times] : timeouts) {
    timeout_count[key.first] += times.size();
    auto& span = timeout_span[key.first];
    span.first = span.first ? std::min(span.first, times.front()) : times.front();
    span.second = std::max(span.second, times.back());
    if (key.second >= 0) timeout_queues[key.first].insert(key.second);
  }
  for (const NetCounter& c : ctx.net.counters) {
    if (c.metric != model::NetMetric::kTxTimeouts) continue;
    auto n = static_cast<uint64_t>(Increase(*c.samples, ctx.from, ctx.to));
    if (n > timeout_count[c.device]) {
      timeout_count[c.device] = n;
      for (const auto& sample : *c.samples)
        if (sample.value > 0) {
          timeout_span[c.device] = {sample.ts, c.samples->back().ts};
          break;
        }
    }
  }
  for (const DeviceTotals& d : ctx.net.devices)
    if (d.tx_timeouts > timeout_count[d.device]) timeout_count[d.device] = d.tx_timeouts;
  const std::map<std::string, std::string> bus = NicBusAddresses(ctx);
  const uint64_t log_window = ctx.th().GetNs("nic.tx_timeout_log_window");
  for (const auto& [device, count] : timeout_count) {
    if (!NicTroubleRule::AnyEvent(count)) continue;
    Finding f = Base(nic_kind::kTxTimeout, device);
    const auto& queues = timeout_queues[device];
    if (queues.size() == 1) f.queue = *queues.begin();
    auto span = timeout_span[device];
    f.start = span.first ? span.first : ctx.from;
    f.end = span.second ? span.second : ctx.to;
    f.title = fmt::format("TX watchdog fired {} time{} on {}{}: the NIC or its driver stopped sending", count,
                          count == 1 ? "" : "s", device.empty() ? "a device" : device,
                          queues.size() == 1 ? fmt::format(" queue {}", *queues.begin()) : "");
    f.metrics = {{"count", static_cast<double>(count)}};
    if (span.first)
      f.evidence.push_back(fmt::format("net_dev_xmit_timeout at {} (first) and {} (last)",
                                       FormatOffset(span.first, t.start_ts), FormatOffset(span.second, t.start_ts)));
    for (int32_t q : queues) f.evidence.push_back(fmt::format("queue {} timed out", q));
    // The watchdog's own line from the kernel log, quoted: joined by the
    // typed device and time (analyze/tx_timeout_log.h), and then left out of
    // the kernel_log findings, so one timeout makes one finding.
    const model::KernelLogEntry* line = nullptr;
    size_t lines = 0;
    auto b = bus.find(device);
    std::string_view bus_info = b == bus.end() ? std::string_view() : std::string_view(b->second);
    for (const model::KernelLogEntry& e : t.kernel_log) {
      if (e.ts < ctx.from || e.ts > ctx.to) continue;
      if (!IsTxTimeoutLineOf(e, device, bus_info, f.start, f.end, log_window)) continue;
      if (!line) line = &e;
      ++lines;
    }
    f.metrics.emplace_back("kernel_log_lines", static_cast<double>(lines));
    if (line) {
      f.evidence.push_back(KernelLogEvidence(*line, t.start_ts) +
                           (lines > 1 ? fmt::format(" (and {} more such lines)", lines - 1) : ""));
    } else {
      f.evidence.push_back(t.kernel_log.empty() ? "no kernel log in the trace to quote the watchdog's line from"
                                                : "no NETDEV WATCHDOG line of it in the recording's kernel log");
    }
    out.push_back(std::move(f));
  }
  for (const auto& [key, times] : stalls) {
    Finding f = Base(nic_kind::kDqlStall, key.first);
    f.queue = key.second;
    f.start = times.front();
    f.end = times.back();
    f.title = fmt::format("{} DQL stall{}{}{}: a TX queue stopped completing", times.size(),
                          times.size() == 1 ? "" : "s", key.first.empty() ? "" : " on " + key.first,
                          key.second >= 0 ? fmt::format(" queue {}", key.second) : "");
    f.metrics = {{"count", static_cast<double>(times.size())}};
    f.evidence.push_back(fmt::format("dql_stall_detected first at {}, last at {}", FormatOffset(times.front(), t.start_ts),
                                     FormatOffset(times.back(), t.start_ts)));
    out.push_back(std::move(f));
  }

  // Full-budget NAPI polls: the collectors' per-device rate counters, else
  // per-poll records.
  std::set<std::string> counted_full;
  for (const NetCounter& c : ctx.net.counters) {
    if (c.metric != model::NetMetric::kNapiFullBudget) continue;
    counted_full.insert(c.device);
    CounterPeak peak = PeakRate(*c.samples, ctx.from, ctx.to);
    if (!rule.FullBudgetRateReached(peak.value)) continue;
    Finding f = Base(nic_kind::kNapiFullBudget, c.device);
    double total = IntegrateRate(*c.samples, ctx.from, ctx.to);
    f.start = c.samples->front().ts;
    f.end = c.samples->back().ts;
    for (const NapiInstance& n : ctx.net.napi)
      if (n.device == c.device && n.full_budget_polls) {
        f.cpus.push_back(n.cpu);
        f.evidence.push_back(fmt::format("CPU {}{}: {} of {} polls used the full budget ({} packets)", n.cpu,
                                         n.queue >= 0 ? fmt::format(" queue {}", n.queue) : "", n.full_budget_polls,
                                         n.polls, n.packets));
      }
    std::sort(f.cpus.begin(), f.cpus.end());
    f.cpus.erase(std::unique(f.cpus.begin(), f.cpus.end()), f.cpus.end());
    f.title = fmt::format("NAPI on {} used its whole budget {:.0f} times (peak {:.0f}/s): more packets arrive than one "
                          "softirq pass takes, so the rest spills to ksoftirqd",
                          c.device, total, peak.value);
    f.metrics = {{"full_budget_polls", total}, {"peak_rate", peak.value}};
    f.windows.push_back({peak.start, peak.end, 0, fmt::format("{:.0f} full-budget polls/s", peak.value)});
    out.push_back(std::move(f));
  }
  for (const auto& [key, times] : full_polls) {
    if (counted_full.count(key.first)) continue;
    RateWindow w = WorstWindow(times, window);
    double rate = PerSecond(w.count, window);
    if (!rule.FullBudgetRateReached(rate) || w.count == 0) continue;
    Finding f = Base(nic_kind::kNapiFullBudget, key.first);
    f.cpus = {key.second};
    f.start = times.front();
    f.end = times.back();
    f.title = fmt::format("NAPI on {} used its whole budget {} times on CPU {} (peak {:.0f}/s): more packets arrive "
                          "than one softirq pass takes",
                          key.first.empty() ? "a device" : key.first, times.size(), key.second, rate);
    f.metrics = {{"full_budget_polls", static_cast<double>(times.size())},
                 {"polls", static_cast<double>(polls[key])},
                 {"peak_rate", rate}};
    f.windows.push_back({w.start, w.start + window, 0, fmt::format("{} full-budget polls", w.count)});
    f.evidence.push_back(fmt::format("{} of {} polls on CPU {} used the full budget", times.size(), polls[key],
                                     key.second));
    out.push_back(std::move(f));
  }

  // Drops by reason: the collectors' drop counters (one per reason), else
  // per-drop records.
  bool drop_counters = false;
  for (const NetCounter& c : ctx.net.counters) {
    if (c.metric != model::NetMetric::kDrops) continue;
    drop_counters = true;
    const std::string& reason = c.detail;
    CounterPeak peak = PeakRate(*c.samples, ctx.from, ctx.to);
    if (!rule.DropRateReached(peak.value)) continue;
    double total = IntegrateRate(*c.samples, ctx.from, ctx.to);
    Finding f = DropsFinding(c.device, reason);
    f.start = c.samples->front().ts;
    f.end = c.samples->back().ts;
    f.title = fmt::format("{:.0f} packets dropped on {} for {} (peak {:.0f}/s)", total, c.device, reason, peak.value);
    f.metrics = {{"drops", total}, {"peak_rate", peak.value}};
    f.windows.push_back({peak.start, peak.end, 0, fmt::format("{:.0f} drops/s", peak.value)});
    for (const DropSite& d : ctx.net.drops)
      if (d.device == c.device && d.reason == reason)
        f.evidence.push_back(fmt::format("{} drops at {}", d.packets, d.location.empty() ? "?" : d.location));
    out.push_back(std::move(f));
  }
  for (const auto& [key, times] : drops) {
    if (drop_counters) break;
    RateWindow w = WorstWindow(times, window);
    double rate = PerSecond(w.count, window);
    if (!rule.DropRateReached(rate)) continue;
    Finding f = Base(nic_kind::kDrops, key.second);
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
    if (count < rule.irq_overlap_min) continue;
    Finding f = Base(nic_kind::kIrqAffinityOverlap, device);
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
    // A few hundred interrupts a second that cost nothing measurable are
    // how a NIC works, not trouble.
    if (!rule.IrqOverlapReached(count, f.cost_share)) continue;
    f.start = ctx.from;
    f.end = ctx.to;
    std::string irq_list;
    for (int32_t irq : irqs) irq_list += (irq_list.empty() ? "" : ", ") + t.IrqName(irq);
    f.title = fmt::format("{} queue interrupts ({} of them, {}) were served on {}, which run{} focus threads", device,
                          count, FormatNs(ns), CpuPhrase(f.cpus), f.cpus.size() == 1 ? "s" : "");
    f.metrics = {{"irqs", static_cast<double>(count)}, {"irq_ns", static_cast<double>(ns)}};
    f.evidence.push_back("IRQs: " + irq_list);
    for (const auto& [cpu, cn] : per_cpu)
      f.evidence.push_back(fmt::format("CPU {}: {} interrupts, {}", cpu, cn.first, FormatNs(cn.second)));
    f.evidence.push_back("move them off the focus CPUs (smp_affinity, or irqbalance --banirq); see gpunoise doctor");
    out.push_back(std::move(f));
  }

  // Kernel health counters that rose during the recording.
  for (const auto& [uuid, samples] : t.tracks.counters) {
    const model::TrackIdentity* id = t.tracks.Identity(uuid);
    if (!id || id->kind != model::TrackKind::kKernelHealthCounter || id->detail.empty() || samples.empty()) continue;
    std::string kind = KernelHealthKind(id->detail);
    double rise = RiseOverBaseline(samples, ctx.from, ctx.to);
    if (rise <= 0) continue;
    Finding f = KernelHealthFinding();
    f.start = samples.front().ts;
    f.end = samples.back().ts;
    for (const auto& s2 : samples)
      if (s2.value > samples.front().value) {
        f.start = s2.ts;
        break;
      }
    f.title = fmt::format("the kernel's {} counter rose by {:g} during the recording", id->detail, rise);
    f.metrics = {{"increase", rise}};
    f.evidence.push_back("the kernel counted a " + kind + " event: its report is in the kernel log (dmesg)");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpunoise::analyze
