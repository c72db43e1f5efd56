#include "analyze/interval_detectors.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyze/format_util.h"
#include "analyze/interference_core.h"
#include "analyze/nic_trouble_core.h"
#include "analyze/storm_core.h"
#include "model/events.h"

namespace gpunoise::analyze {
namespace {

constexpr uint32_t kNetTx = static_cast<uint32_t>(model::SoftirqVec::kNetTx);
constexpr uint32_t kNetRx = static_cast<uint32_t>(model::SoftirqVec::kNetRx);
// Fewer sampler hits than this on a CPU in one interval say nothing about
// shares (49 Hz gives ~49 per second).
constexpr uint64_t kMinSamples = 10;
// bpf/runqlat.h GN_RQ_HISTORY: the runs per CPU a wait can be charged to.
constexpr int kRunHistory = 16;

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

std::string Percent(double share) { return fmt::format("{:.0f}%", share * 100); }

std::string Rate(double per_s) {
  if (per_s >= 1e6) return fmt::format("{:.1f}M/s", per_s / 1e6);
  if (per_s >= 1e4) return fmt::format("{:.0f}k/s", per_s / 1e3);
  return fmt::format("{:.0f}/s", per_s);
}

const model::NetNames& Names(const IntervalContext& ctx) {
  static const model::NetNames kNone;
  return ctx.names ? *ctx.names : kNone;
}

const model::IrqInfo* Irq(const IntervalContext& ctx, int32_t irq) {
  if (!ctx.irqs) return nullptr;
  auto it = ctx.irqs->find(irq);
  return it == ctx.irqs->end() ? nullptr : &it->second;
}

Finding Base(const IntervalContext& ctx, std::string detector, std::string kind) {
  Finding f;
  f.detector = std::move(detector);
  f.kind = std::move(kind);
  f.start = ctx.start;
  f.end = ctx.end;
  return f;
}

// The CPUs where focus threads ran or waited this interval, with the time
// they were there (running plus waiting).
std::map<uint32_t, uint64_t> FocusCpus(const model::AggregateSnapshot& d) {
  std::map<uint32_t, uint64_t> out;
  for (const auto& f : d.focus) {
    uint64_t t = f.oncpu_ns + f.wait_woken_ns + f.wait_preempted_ns;
    if (t) out[f.cpu] += t;
  }
  return out;
}

// Sampler hits on `cpu`, and the busiest task there that is not focus,
// idle or `skip_prefix`.
struct CpuSamples {
  uint64_t total = 0;
  std::map<std::string, uint64_t> tasks;  // comm -> hits (non-focus tasks)
};
std::map<uint32_t, CpuSamples> SamplesByCpu(const model::AggregateSnapshot& d) {
  std::map<uint32_t, CpuSamples> out;
  for (const auto& s : d.samples) {
    CpuSamples& c = out[s.cpu];
    c.total += s.count;
    if (s.context == model::SampleContext::kTask && s.task_class != model::TaskClass::kFocus &&
        s.task_class != model::TaskClass::kIdle)
      c.tasks[std::string(s.comm.view())] += s.count;
  }
  return out;
}

// What drove softirq work on `cpu` this interval, asked as the report asks
// it of a trace (softirq_storm_detector.cc): the device whose NAPI polls
// did the most work there, its busiest queue there, and the NIC IRQ that
// serves that NAPI instance, else the one that fired most there (the
// device's own first).
struct Drivers {
  std::string device;
  int32_t queue = -1;
  int32_t irq = -1;
  std::vector<std::string> evidence;
};
Drivers FindDrivers(const IntervalContext& ctx, uint32_t cpu) {
  const model::AggregateSnapshot& d = *ctx.delta;
  const double secs = Seconds(ctx.length_ns());
  Drivers out;
  struct Dev {
    model::NapiCount total;
    std::map<int32_t, std::pair<uint64_t, int32_t>> queues;  // queue -> work, irq
  };
  std::map<std::string, Dev> devices;
  for (const auto& n : d.net.napi) {
    if (n.cpu != cpu) continue;
    Dev& dev = devices[model::DeviceLabel(n.dev, Names(ctx))];
    dev.total.polls += n.polls;
    dev.total.work += n.work;
    dev.total.full_budget += n.full_budget;
    auto& q = dev.queues.try_emplace(n.queue, 0, -1).first->second;
    q.first += n.work;
    if (n.irq >= 0) q.second = n.irq;
  }
  const Dev* best = nullptr;
  for (const auto& [label, dev] : devices)
    if (dev.total.work && (!best || dev.total.work > best->total.work)) {
      best = &dev;
      out.device = label;
    }
  int32_t napi_irq = -1;
  if (best) {
    uint64_t top = 0;
    for (const auto& [q, wi] : best->queues)
      if (wi.first > top) {
        top = wi.first;
        out.queue = q;
        napi_irq = wi.second;
      }
    out.evidence.push_back(fmt::format("NAPI on CPU {}: {} {} packets in {} polls ({} used the whole budget)", cpu,
                                       out.device, Rate(static_cast<double>(best->total.work) / secs),
                                       Rate(static_cast<double>(best->total.polls) / secs),
                                       Rate(static_cast<double>(best->total.full_budget) / secs)));
  }
  const model::HardirqCounter* irq = nullptr;
  auto score = [&](const model::HardirqCounter& h) {
    const model::IrqInfo* info = Irq(ctx, h.irq);
    bool matches = out.device.empty() || info->device == out.device;
    return h.count * (matches ? 1000 : 1);
  };
  for (const auto& h : d.hardirqs) {
    if (h.cpu != cpu || !h.count) continue;
    const model::IrqInfo* info = Irq(ctx, h.irq);
    if (!info || info->device.empty()) continue;
    if (!irq || score(h) > score(*irq)) irq = &h;
  }
  if (irq) out.evidence.push_back(fmt::format("IRQ {} ({}) on CPU {}: {} interrupts", irq->irq, Irq(ctx, irq->irq)->name,
                                              cpu, Rate(static_cast<double>(irq->count) / secs)));
  out.irq = napi_irq >= 0 ? napi_irq : irq ? irq->irq : -1;
  if (const model::IrqInfo* info = out.irq >= 0 ? Irq(ctx, out.irq) : nullptr; info && !info->device.empty()) {
    if (out.device.empty()) out.device = info->device;
    if (out.queue < 0 && info->device == out.device) out.queue = info->queue;
  }
  return out;
}

// ksoftirqd's running time on each CPU, estimated from the sampler: its
// share of the CPU's hits times the interval.
std::map<uint32_t, std::pair<uint64_t, std::string>> KsoftirqdTime(const IntervalContext& ctx) {
  std::map<uint32_t, std::pair<uint64_t, std::string>> out;
  for (const auto& [cpu, s] : SamplesByCpu(*ctx.delta)) {
    if (s.total < kMinSamples) continue;
    auto it = s.tasks.find(fmt::format("ksoftirqd/{}", cpu));
    if (it == s.tasks.end()) continue;
    double share = static_cast<double>(it->second) / static_cast<double>(s.total);
    out[cpu] = {static_cast<uint64_t>(share * static_cast<double>(ctx.length_ns())),
                fmt::format("CPU {}: {} of {} sampler hits", cpu, it->second, s.total)};
  }
  return out;
}

}  // namespace

std::vector<Finding> DetectIntervalSoftirqStorms(const IntervalContext& ctx) {
  std::vector<Finding> out;
  const uint64_t len = ctx.length_ns();
  if (!ctx.delta || !ctx.thresholds || !len) return out;
  const model::AggregateSnapshot& d = *ctx.delta;
  // The report's rule on one window: this interval (storm_core.h says why
  // a storm shorter than the interval is diluted here).
  const StormRule rule = StormRule::From(*ctx.thresholds);
  const double secs = Seconds(len);
  std::map<uint32_t, SoftirqWindow> windows;
  std::map<uint32_t, std::array<uint64_t, model::kNumSoftirqVecs>> counts;
  for (const auto& c : d.softirqs) {
    SoftirqWindow& w = windows[c.cpu];
    auto& n = counts[c.cpu];
    for (uint32_t vec = 0; vec < model::kNumSoftirqVecs; ++vec) {
      w.vec_ns[vec] += c.ns[vec];
      n[vec] += c.count[vec];
    }
  }
  const auto ksoftirqd = KsoftirqdTime(ctx);
  for (const auto& [cpu, k] : ksoftirqd) windows[cpu].ksoftirqd_ns = k.first;
  for (auto& [cpu, w] : windows) {
    w.cpu = cpu;
    w.start = ctx.start;
    w.length_ns = len;
    for (const StormHit& hit : EvaluateStormWindow(w, rule, KsoftirqdVector(w.vec_ns))) {
      Drivers drivers = FindDrivers(ctx, cpu);
      Finding f = StormFinding(cpu, hit.vec, hit.by_ksoftirqd, drivers.device, drivers.queue);
      f.start = ctx.start;
      f.end = ctx.end;
      f.culprit_irq = drivers.irq;
      f.cost_ns = hit.by_ksoftirqd ? w.ksoftirqd_ns : w.vec_ns[hit.vec];
      f.cost_share = hit.share;
      const std::string name(model::SoftirqName(hit.vec));
      const uint64_t count = counts.count(cpu) ? counts[cpu][hit.vec] : 0;
      f.metrics = {{"vector", static_cast<double>(hit.vec)},
                   {"share", hit.share},
                   {"softirqs_per_s", static_cast<double>(count) / secs},
                   {"window_ns", static_cast<double>(len)}};
      f.evidence.push_back(fmt::format("CPU {}: {} took {:.0f} ms of {:.0f} ms ({} softirqs)", cpu, name,
                                       static_cast<double>(w.vec_ns[hit.vec]) / 1e6, static_cast<double>(len) / 1e6,
                                       Rate(static_cast<double>(count) / secs)));
      if (hit.by_ksoftirqd) f.evidence.push_back(ksoftirqd.at(cpu).second);
      for (auto& line : drivers.evidence) f.evidence.push_back(std::move(line));
      const std::string driven = drivers.device.empty()           ? ""
                                 : drivers.queue >= 0 ? fmt::format(", driven by {} queue {}", drivers.device,
                                                                    drivers.queue)
                                                      : ", driven by " + drivers.device;
      if (hit.by_ksoftirqd)
        f.title = fmt::format("ksoftirqd/{} ran {} of CPU {} in a {} interval (threshold {}): {} softirqs keep "
                              "coming{}",
                              cpu, Percent(hit.share), cpu, FormatNs(len),
                              ctx.thresholds->Format("softirq.ksoftirqd_share"), name, driven);
      else
        f.title = fmt::format("{} softirqs took {} of CPU {} in a {} interval (threshold {}){}", name,
                              Percent(hit.share), cpu, FormatNs(len),
                              ctx.thresholds->Format("softirq.share"), driven);
      out.push_back(std::move(f));
    }
  }
  return out;
}

// The report's DescribeThread without what only a timeline knows (the
// process's name and container).
std::string DescribeCulpritTask(const model::RunqueueCulprit& c) {
  if (c.tgid > 0 && c.tgid != c.tid) return fmt::format("{} (tid {}, pid {})", c.comm.view(), c.tid, c.tgid);
  return fmt::format("{} (pid {})", c.comm.view(), c.tid);
}

std::vector<Finding> DetectIntervalInterference(const IntervalContext& ctx) {
  std::vector<Finding> out;
  if (!ctx.delta || !ctx.thresholds || !ctx.length_ns()) return out;
  const model::AggregateSnapshot& d = *ctx.delta;
  uint64_t oncpu = 0, wait_woken = 0, wait_preempted = 0, hard = 0, soft = 0;
  uint64_t wait_hard = 0, wait_soft = 0, wait_unknown = 0;
  uint64_t preempted_by[model::kNumTaskClasses] = {};
  std::vector<uint32_t> cpus;
  for (const auto& f : d.focus) {
    oncpu += f.oncpu_ns;
    wait_woken += f.wait_woken_ns;
    wait_preempted += f.wait_preempted_ns;
    hard += f.hardirq_ns;
    soft += f.softirq_ns;
    wait_hard += f.wait_hardirq_ns;
    wait_soft += f.wait_softirq_ns;
    wait_unknown += f.wait_unknown_ns;
    for (uint32_t k = 0; k < model::kNumTaskClasses; ++k) preempted_by[k] += f.preempted_by[k];
    if (f.oncpu_ns + f.wait_woken_ns + f.wait_preempted_ns) cpus.push_back(f.cpu);
  }
  // Interrupt time lies inside the focus threads' on-CPU time.
  const uint64_t observed = oncpu + wait_woken + wait_preempted;
  if (!observed) return out;
  const InterferenceRule rule = InterferenceRule::From(*ctx.thresholds);

  // The culprits the aggregates tell apart, each judged by the report's
  // rule on its own: each task that had a CPU while focus threads waited
  // for it (the kernel charges a wait, when it ends, to the CPU's last
  // runs), and the hard irqs and softirqs that interrupted or delayed them
  // (not told apart by IRQ or vector here). gpunoise's own threads are
  // never the culprit, as the report leaves out the recorder's.
  struct Part {
    uint64_t wait_ns, interrupt_ns;
    std::string culprit;
    const char* culprit_kind;
    int32_t tid = 0;
    std::vector<uint32_t> cpus;
  };
  std::vector<Part> parts;
  {
    std::map<int32_t, Part> tasks;
    for (const model::RunqueueCulprit& c : d.culprits) {
      if (c.comm.view() == "gpunoise" || !c.wait_ns) continue;
      Part& p = tasks[c.tid];
      if (p.culprit.empty()) p = {0, 0, DescribeCulpritTask(c), "task", c.tid, {}};
      p.wait_ns += c.wait_ns;
      p.cpus.push_back(c.cpu);
    }
    for (auto& [tid, p] : tasks) {
      std::sort(p.cpus.begin(), p.cpus.end());
      p.cpus.erase(std::unique(p.cpus.begin(), p.cpus.end()), p.cpus.end());
      parts.push_back(std::move(p));
    }
  }
  // Interrupts are named by what took the most time on the focus CPUs
  // (the focus counters do not say which IRQ or vector hit them).
  std::set<uint32_t> focus_cpus(cpus.begin(), cpus.end());
  std::string hard_name = "hard irqs", soft_name = "softirqs";
  {
    std::map<int32_t, uint64_t> irq_ns;
    for (const auto& h : d.hardirqs)
      if (focus_cpus.count(h.cpu)) irq_ns[h.irq] += h.ns;
    auto top = std::max_element(irq_ns.begin(), irq_ns.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top != irq_ns.end() && top->second) {
      const model::IrqInfo* info = Irq(ctx, top->first);
      hard_name = HardirqCulpritName(top->first, info ? std::string_view(info->name) : std::string_view());
    }
    uint64_t vec_ns[model::kNumSoftirqVecs] = {};
    for (const auto& c : d.softirqs)
      if (focus_cpus.count(c.cpu))
        for (uint32_t v = 0; v < model::kNumSoftirqVecs; ++v) vec_ns[v] += c.ns[v];
    uint32_t top_vec = 0;
    for (uint32_t v = 1; v < model::kNumSoftirqVecs; ++v)
      if (vec_ns[v] > vec_ns[top_vec]) top_vec = v;
    if (vec_ns[top_vec]) soft_name = SoftirqCulpritName(top_vec);
  }
  parts.push_back({wait_hard, hard, hard_name, "hardirq", 0, cpus});
  parts.push_back({wait_soft, soft, soft_name, "softirq", 0, cpus});
  const std::string summary =
      fmt::format("focus threads ran {:.0f} ms and waited {:.0f} ms after wakeups and {:.0f} ms after "
                  "preemptions; interrupts took {:.1f} ms (hard) and {:.1f} ms (soft) of their time",
                  oncpu / 1e6, wait_woken / 1e6, wait_preempted / 1e6, hard / 1e6, soft / 1e6);
  for (const Part& p : parts) {
    const uint64_t cost = p.wait_ns + p.interrupt_ns;
    if (!cost || !rule.Reached(cost, observed)) continue;
    const double share = InterferenceShare(cost, observed);
    Finding f = Base(ctx, "interference", std::string(InterferenceKind(p.wait_ns, p.interrupt_ns)));
    f.cpus = p.cpus;
    f.cost_ns = cost;
    f.cost_share = share;
    f.culprit = p.culprit;
    f.culprit_kind = p.culprit_kind;
    f.culprit_tid = p.tid;
    f.evidence.push_back(summary);
    if (p.wait_ns) {
      uint32_t by = 0;
      for (uint32_t k = 1; k < model::kNumTaskClasses; ++k)
        if (preempted_by[k] > preempted_by[by]) by = k;
      if (preempted_by[by])
        f.evidence.push_back(fmt::format("focus threads were preempted {} times, mostly by {} tasks",
                                         preempted_by[0] + preempted_by[1] + preempted_by[2] + preempted_by[3],
                                         model::TaskClassName(static_cast<model::TaskClass>(by))));
      if (wait_unknown)
        f.evidence.push_back(fmt::format("{:.1f} ms of the waits began before the last {} runs the kernel "
                                         "keeps per CPU and are charged to no one",
                                         wait_unknown / 1e6, kRunHistory));
    }
    f.metrics = {{"wait_ns", static_cast<double>(p.wait_ns)},
                 {"interrupt_ns", static_cast<double>(p.interrupt_ns)},
                 {"share", share},
                 {"wait_after_wakeup_s", Seconds(wait_woken)},
                 {"wait_after_preemption_s", Seconds(wait_preempted)}};
    f.title = p.wait_ns >= p.interrupt_ns
                  ? fmt::format("{} kept focus threads waiting {:.0f} ms in a run queue ({} of their time)", p.culprit,
                                p.wait_ns / 1e6, Percent(share))
                  : fmt::format("{} interrupted focus threads for {:.0f} ms ({} of their time)", p.culprit,
                                p.interrupt_ns / 1e6, Percent(share));
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> DetectIntervalNicTrouble(const IntervalContext& ctx) {
  std::vector<Finding> out;
  const uint64_t len = ctx.length_ns();
  if (!ctx.delta || !ctx.thresholds || !len) return out;
  const model::AggregateSnapshot& d = *ctx.delta;
  const model::NetNames& names = Names(ctx);
  const NicTroubleRule rule = NicTroubleRule::From(*ctx.thresholds);
  // Every finding spans the interval (the aggregates do not say when in it).
  auto at = [&](Finding f) {
    f.start = ctx.start;
    f.end = ctx.end;
    return f;
  };

  // TX watchdog timeouts, per device: each one matters.
  std::map<std::string, std::pair<uint64_t, std::set<int32_t>>> timeouts;
  for (const auto& c : d.net.devices)
    if (c.dir == model::NetDirection::kTxTimeout && c.packets) {
      auto& t = timeouts[model::DeviceLabel(c.dev, names)];
      t.first += c.packets;
      if (c.queue >= 0) t.second.insert(c.queue);
    }
  for (const auto& [device, t] : timeouts) {
    if (!NicTroubleRule::AnyEvent(t.first)) continue;
    Finding f = at(NicTroubleFinding(nic_kind::kTxTimeout, device));
    if (t.second.size() == 1) f.queue = *t.second.begin();
    f.metrics = {{"count", static_cast<double>(t.first)}};
    f.title = fmt::format("TX watchdog timeout on {}{} ({} in the interval)", device,
                          f.queue >= 0 ? fmt::format(" queue {}", f.queue) : "", t.first);
    out.push_back(std::move(f));
  }
  if (NicTroubleRule::AnyEvent(d.dql_stalls)) {
    Finding f = at(NicTroubleFinding(nic_kind::kDqlStall, ""));
    f.metrics = {{"count", static_cast<double>(d.dql_stalls)}};
    f.title = fmt::format("{} TX byte-queue-limit stalls (napi:dql_stall_detected)", d.dql_stalls);
    out.push_back(std::move(f));
  }

  // NAPI polls that use their whole budget, per device and CPU.
  std::map<std::pair<std::string, uint32_t>, model::NapiCount> full;
  for (const auto& n : d.net.napi) {
    auto& t = full[{model::DeviceLabel(n.dev, names), n.cpu}];
    t.polls += n.polls;
    t.full_budget += n.full_budget;
  }
  for (const auto& [key, t] : full) {
    double rate = PerSecond(t.full_budget, len);
    if (!t.full_budget || !rule.FullBudgetRateReached(rate)) continue;
    const auto& [device, cpu] = key;
    Finding f = at(NicTroubleFinding(nic_kind::kNapiFullBudget, device));
    f.cpus = {cpu};
    f.metrics = {{"full_budget_polls", static_cast<double>(t.full_budget)},
                 {"polls", static_cast<double>(t.polls)},
                 {"peak_rate", rate}};
    f.title = fmt::format("{} NAPI polls used their whole budget {} on CPU {} (threshold {}): RX work is left behind",
                          device, Rate(rate), cpu, ctx.thresholds->Format("nic.full_budget_rate"));
    out.push_back(std::move(f));
  }

  // Drops of one reason on one device.
  std::map<std::pair<std::string, std::string>, uint64_t> drops;  // device, reason
  for (const auto& c : d.net.drops)
    drops[{model::DeviceLabel(c.dev, names), model::DropReasonLabel(c.reason, names)}] += c.packets;
  for (const auto& [key, n] : drops) {
    double rate = PerSecond(n, len);
    if (!n || !rule.DropRateReached(rate)) continue;
    const auto& [device, reason] = key;
    Finding f = at(DropsFinding(device, reason));
    f.metrics = {{"drops", static_cast<double>(n)}, {"peak_rate", rate}, {"drops_per_s", rate}};
    f.title = fmt::format("{} packets dropped {} on {} (threshold {})", reason, Rate(rate), device,
                          ctx.thresholds->Format("nic.drop_rate"));
    out.push_back(std::move(f));
  }

  // NIC interrupts on CPUs where focus threads run.
  std::map<uint32_t, uint64_t> focus_cpus = FocusCpus(d);
  uint64_t focus_time = 0;
  for (const auto& [cpu, t] : focus_cpus) focus_time += t;
  if (focus_time) {
    std::map<std::string, std::pair<uint64_t, uint64_t>> by_device;  // count, ns
    std::set<uint32_t> cpus;
    for (const auto& h : d.hardirqs) {
      if (!focus_cpus.count(h.cpu)) continue;
      const model::IrqInfo* info = Irq(ctx, h.irq);
      if (!info || info->device.empty()) continue;
      auto& t = by_device[info->device];
      t.first += h.count;
      t.second += h.ns;
      cpus.insert(h.cpu);
    }
    // The network softirqs those interrupts raise run on the same CPUs.
    uint64_t net_softirq = 0;
    for (const auto& c : d.softirqs)
      if (cpus.count(c.cpu)) net_softirq += c.ns[kNetRx] + c.ns[kNetTx];
    for (const auto& [device, t] : by_device) {
      double share = static_cast<double>(t.second + net_softirq) / static_cast<double>(focus_time);
      if (!rule.IrqOverlapReached(t.first, share)) continue;
      Finding f = at(NicTroubleFinding(nic_kind::kIrqAffinityOverlap, device));
      f.cpus.assign(cpus.begin(), cpus.end());
      f.cost_ns = t.second + net_softirq;
      f.cost_share = share;
      f.metrics = {{"irqs", static_cast<double>(t.first)}, {"irq_ns", static_cast<double>(t.second)}, {"share", share}};
      f.title = fmt::format("{} interrupts ({}) served on CPUs where focus threads run, costing {} of their time",
                            device, t.first, Percent(share));
      out.push_back(std::move(f));
    }
  }

  // The kernel's own trouble counters.
  for (const auto& [name, n] : d.kernel) {
    if (!NicTroubleRule::AnyEvent(n)) continue;
    std::string kind = name;
    if (kind.size() > 6 && kind.compare(kind.size() - 6, 6, "_count") == 0) kind.resize(kind.size() - 6);
    Finding f = at(KernelHealthFinding());
    f.metrics = {{"increase", static_cast<double>(n)}};
    f.title = fmt::format("the kernel counted {} new {} event{} (/sys/kernel/{})", n, kind, n == 1 ? "" : "s", name);
    f.evidence.push_back("the kernel counted a " + kind + " event: its report is in the kernel log (dmesg)");
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> DetectIntervalFindings(const IntervalContext& ctx) {
  std::vector<Finding> out = DetectIntervalSoftirqStorms(ctx);
  for (auto* detect : {&DetectIntervalInterference, &DetectIntervalNicTrouble}) {
    std::vector<Finding> more = (*detect)(ctx);
    out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return out;
}

std::string IntervalWindowNote(const Thresholds& thresholds, uint64_t interval_ns) {
  const StormRule rule = StormRule::From(thresholds);
  if (!interval_ns || interval_ns <= rule.window_ns) return {};
  const double diluted = static_cast<double>(rule.window_ns) / static_cast<double>(interval_ns);
  return fmt::format("softirq_storm judges softirq.share over each {} interval, not a {} window (softirq.window): "
                     "a {} storm at 100% shows as {:.0f}% of the interval (softirq.share {}); --interval {:g}ms judges as "
                     "the report does",
                     FormatNs(interval_ns), FormatNs(rule.window_ns), FormatNs(rule.window_ns), diluted * 100,
                     thresholds.Format("softirq.share"), static_cast<double>(rule.window_ns) / 1e6);
}

}  // namespace gpunoise::analyze
