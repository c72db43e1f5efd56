#include "analyze/interval_detectors.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "model/events.h"
#include "common/strings.h"

namespace gpunoise::analyze {
namespace {

constexpr uint32_t kNetTx = static_cast<uint32_t>(model::SoftirqVec::kNetTx);
constexpr uint32_t kNetRx = static_cast<uint32_t>(model::SoftirqVec::kNetRx);
// Fewer sampler hits than this on a CPU in one interval say nothing about
// shares (49 Hz gives ~49 per second).
constexpr uint64_t kMinSamples = 10;

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

// What drove a network softirq on `cpu`: the NAPI instance that did the
// most work there, and the NIC IRQ that fired most there.
void AttributeNetwork(const IntervalContext& ctx, uint32_t cpu, Finding* f) {
  const model::AggregateSnapshot& d = *ctx.delta;
  const double secs = Seconds(ctx.length_ns());
  std::map<std::pair<model::NetDeviceKey, int32_t>, model::NapiCount> napi;
  for (const auto& n : d.net.napi) {
    if (n.cpu != cpu) continue;
    auto& t = napi[{n.dev, n.queue}];
    t.polls += n.polls;
    t.work += n.work;
    t.full_budget += n.full_budget;
  }
  auto top = std::max_element(napi.begin(), napi.end(),
                              [](const auto& a, const auto& b) { return a.second.work < b.second.work; });
  if (top != napi.end() && top->second.work) {
    f->device = model::DeviceLabel(top->first.first, Names(ctx));
    f->queue = top->first.second;
    f->culprit = f->queue >= 0 ? fmt::format("{} queue {}", f->device, f->queue) : f->device;
    f->culprit_kind = "device";
    f->evidence.push_back(fmt::format("NAPI on CPU {}: {} {} packets in {} polls ({} used the whole budget)", cpu,
                                      f->culprit, Rate(static_cast<double>(top->second.work) / secs),
                                      Rate(static_cast<double>(top->second.polls) / secs),
                                      Rate(static_cast<double>(top->second.full_budget) / secs)));
    f->metrics.emplace_back("napi_packets_per_s", static_cast<double>(top->second.work) / secs);
  }
  const model::HardirqCounter* irq = nullptr;
  for (const auto& h : d.hardirqs) {
    if (h.cpu != cpu || !h.count) continue;
    const model::IrqInfo* info = Irq(ctx, h.irq);
    if (!info || info->device.empty()) continue;
    if (!irq || h.count > irq->count) irq = &h;
  }
  if (irq) {
    const model::IrqInfo* info = Irq(ctx, irq->irq);
    f->culprit_irq = irq->irq;
    if (f->device.empty()) {
      f->device = info->device;
      f->queue = info->queue;
      f->culprit = info->name;
      f->culprit_kind = "hardirq";
    }
    f->evidence.push_back(fmt::format("IRQ {} ({}) on CPU {}: {} interrupts", irq->irq, info->name, cpu,
                                      Rate(static_cast<double>(irq->count) / secs)));
  }
}

}  // namespace

std::vector<Finding> DetectIntervalSoftirqStorms(const IntervalContext& ctx) {
  std::vector<Finding> out;
  const uint64_t len = ctx.length_ns();
  if (!ctx.delta || !ctx.thresholds || !len) return out;
  const model::AggregateSnapshot& d = *ctx.delta;
  const double share_limit = ctx.thresholds->Get("softirq.share");
  const double secs = Seconds(len);
  for (const auto& c : d.softirqs) {
    for (uint32_t vec = 0; vec < model::kNumSoftirqVecs; ++vec) {
      double share = static_cast<double>(c.ns[vec]) / static_cast<double>(len);
      if (share <= share_limit) continue;
      std::string name(model::SoftirqName(vec));
      Finding f = Base(ctx, "softirq_storm", Lower(name));
      f.cpus = {c.cpu};
      f.cost_ns = c.ns[vec];
      f.cost_share = share;
      f.culprit = name;
      f.culprit_kind = "softirq";
      f.metrics = {{"share", share}, {"softirqs_per_s", static_cast<double>(c.count[vec]) / secs}};
      f.evidence.push_back(fmt::format("CPU {}: {} took {:.0f} ms of {:.0f} ms ({} softirqs)", c.cpu, name,
                                       static_cast<double>(c.ns[vec]) / 1e6, static_cast<double>(len) / 1e6,
                                       Rate(static_cast<double>(c.count[vec]) / secs)));
      if (vec == kNetRx || vec == kNetTx) AttributeNetwork(ctx, c.cpu, &f);
      f.title = fmt::format("{} softirqs took {} of CPU {} (threshold {}){}", name, Percent(share), c.cpu,
                            ctx.thresholds->Format("softirq.share"),
                            f.culprit_kind == "softirq" ? "" : ", driven by " + f.culprit);
      out.push_back(std::move(f));
    }
  }
  // ksoftirqd: softirqs that kept coming and were handed to the kernel
  // thread. Its share of the CPU comes from the sampler.
  const double ksoftirqd_limit = ctx.thresholds->Get("softirq.ksoftirqd_share");
  for (const auto& [cpu, s] : SamplesByCpu(d)) {
    if (s.total < kMinSamples) continue;
    auto it = s.tasks.find(fmt::format("ksoftirqd/{}", cpu));
    if (it == s.tasks.end()) continue;
    double share = static_cast<double>(it->second) / static_cast<double>(s.total);
    if (share <= ksoftirqd_limit) continue;
    Finding f = Base(ctx, "softirq_storm", "ksoftirqd");
    f.cpus = {cpu};
    f.cost_ns = static_cast<uint64_t>(share * static_cast<double>(len));
    f.cost_share = share;
    f.culprit = it->first;
    f.culprit_kind = "task";
    f.metrics = {{"share", share}};
    f.evidence.push_back(fmt::format("CPU {}: {} of {} sampler hits", cpu, it->second, s.total));
    AttributeNetwork(ctx, cpu, &f);
    f.title = fmt::format("ksoftirqd/{} ran {} of CPU {} (threshold {}): softirqs keep coming{}", cpu,
                          Percent(share), cpu, ctx.thresholds->Format("softirq.ksoftirqd_share"),
                          f.device.empty() ? "" : ", driven by " + f.culprit);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> DetectIntervalInterference(const IntervalContext& ctx) {
  std::vector<Finding> out;
  if (!ctx.delta || !ctx.thresholds || !ctx.length_ns()) return out;
  const model::AggregateSnapshot& d = *ctx.delta;
  uint64_t oncpu = 0, wait_woken = 0, wait_preempted = 0, hard = 0, soft = 0;
  uint64_t preempted_by[model::kNumTaskClasses] = {};
  std::vector<uint32_t> cpus;
  for (const auto& f : d.focus) {
    oncpu += f.oncpu_ns;
    wait_woken += f.wait_woken_ns;
    wait_preempted += f.wait_preempted_ns;
    hard += f.hardirq_ns;
    soft += f.softirq_ns;
    for (uint32_t k = 0; k < model::kNumTaskClasses; ++k) preempted_by[k] += f.preempted_by[k];
    if (f.oncpu_ns + f.wait_woken_ns + f.wait_preempted_ns) cpus.push_back(f.cpu);
  }
  // Interrupt time lies inside the focus threads' on-CPU time.
  const uint64_t observed = oncpu + wait_woken + wait_preempted;
  const uint64_t lost = wait_woken + wait_preempted + hard + soft;
  if (!observed) return out;
  const double share = static_cast<double>(lost) / static_cast<double>(observed);
  if (lost < ctx.thresholds->GetNs("interference.min_delay") || share < ctx.thresholds->Get("interference.min_share"))
    return out;

  Finding f = Base(ctx, "interference", "");
  f.cpus = cpus;
  f.cost_ns = lost;
  f.cost_share = share;
  // The biggest part names the culprit.
  struct Part {
    uint64_t ns;
    const char* kind;
    const char* culprit_kind;
  };
  Part parts[] = {{wait_preempted, "run_queue_delay", "task"},
                  {wait_woken, "run_queue_delay", "task"},
                  {hard, "interrupts", "hardirq"},
                  {soft, "interrupts", "softirq"}};
  const Part* top = &parts[0];
  for (const Part& p : parts)
    if (p.ns > top->ns) top = &p;
  f.kind = top->kind;
  f.culprit_kind = top->culprit_kind;
  if (top == &parts[2]) {
    f.culprit = "hard irqs";
  } else if (top == &parts[3]) {
    f.culprit = "softirqs";
  } else {
    // Tasks: the sampler's busiest non-focus task on the focus CPUs names
    // one; the preemption counts say what kind.
    std::map<std::string, uint64_t> tasks;
    auto samples = SamplesByCpu(d);
    for (uint32_t cpu : cpus)
      if (auto it = samples.find(cpu); it != samples.end())
        for (const auto& [comm, n] : it->second.tasks) tasks[comm] += n;
    auto busiest = std::max_element(tasks.begin(), tasks.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
    f.culprit = busiest != tasks.end() ? busiest->first : "other tasks";
    uint32_t by = 0;
    for (uint32_t k = 1; k < model::kNumTaskClasses; ++k)
      if (preempted_by[k] > preempted_by[by]) by = k;
    if (preempted_by[by])
      f.evidence.push_back(fmt::format("focus threads were preempted {} times, mostly by {} tasks",
                                       preempted_by[0] + preempted_by[1] + preempted_by[2] + preempted_by[3],
                                       model::TaskClassName(static_cast<model::TaskClass>(by))));
  }
  f.metrics = {{"lost_share", share},
               {"wait_after_wakeup_s", Seconds(wait_woken)},
               {"wait_after_preemption_s", Seconds(wait_preempted)},
               {"hardirq_s", Seconds(hard)},
               {"softirq_s", Seconds(soft)}};
  f.evidence.insert(f.evidence.begin(),
                    fmt::format("focus threads ran {:.0f} ms and waited {:.0f} ms after wakeups and {:.0f} ms after "
                                "preemptions; interrupts took {:.1f} ms (hard) and {:.1f} ms (soft) of their time",
                                oncpu / 1e6, wait_woken / 1e6, wait_preempted / 1e6, hard / 1e6, soft / 1e6));
  f.title = fmt::format("focus threads lost {} of their time ({:.0f} ms) to {}; most to {}", Percent(share), lost / 1e6,
                        top->kind == std::string("interrupts") ? "interrupts" : "waiting for a CPU", f.culprit);
  out.push_back(std::move(f));
  return out;
}

std::vector<Finding> DetectIntervalNicTrouble(const IntervalContext& ctx) {
  std::vector<Finding> out;
  const uint64_t len = ctx.length_ns();
  if (!ctx.delta || !ctx.thresholds || !len) return out;
  const model::AggregateSnapshot& d = *ctx.delta;
  const model::NetNames& names = Names(ctx);
  const double secs = Seconds(len);

  // TX watchdog timeouts: each one matters.
  std::map<std::pair<std::string, int32_t>, uint64_t> timeouts;
  for (const auto& c : d.net.devices)
    if (c.dir == model::NetDirection::kTxTimeout && c.packets) timeouts[{model::DeviceLabel(c.dev, names), c.queue}] += c.packets;
  for (const auto& [key, n] : timeouts) {
    Finding f = Base(ctx, "nic_trouble", "tx_timeout");
    f.device = key.first;
    f.queue = key.second;
    f.culprit = key.first;
    f.culprit_kind = "device";
    f.metrics = {{"tx_timeouts", static_cast<double>(n)}};
    f.title = fmt::format("TX watchdog timeout on {}{} ({} in the interval)", key.first,
                          key.second >= 0 ? fmt::format(" queue {}", key.second) : "", n);
    out.push_back(std::move(f));
  }
  if (d.dql_stalls) {
    Finding f = Base(ctx, "nic_trouble", "dql_stall");
    f.culprit = "TX queue";
    f.culprit_kind = "device";
    f.metrics = {{"dql_stalls", static_cast<double>(d.dql_stalls)}};
    f.title = fmt::format("{} TX byte-queue-limit stalls (napi:dql_stall_detected)", d.dql_stalls);
    out.push_back(std::move(f));
  }

  // NAPI polls that use their whole budget, per device and CPU.
  const double full_limit = ctx.thresholds->Get("nic.full_budget_rate");
  std::map<std::tuple<std::string, int32_t, uint32_t>, model::NapiCount> full;
  for (const auto& n : d.net.napi) {
    auto& t = full[{model::DeviceLabel(n.dev, names), n.queue, n.cpu}];
    t.polls += n.polls;
    t.full_budget += n.full_budget;
  }
  for (const auto& [key, t] : full) {
    double rate = static_cast<double>(t.full_budget) / secs;
    if (rate <= full_limit) continue;
    const auto& [device, queue, cpu] = key;
    Finding f = Base(ctx, "nic_trouble", "napi_full_budget");
    f.device = device;
    f.queue = queue;
    f.cpus = {cpu};
    f.culprit = device;
    f.culprit_kind = "device";
    f.metrics = {{"full_budget_polls_per_s", rate}, {"polls_per_s", static_cast<double>(t.polls) / secs}};
    f.title = fmt::format("{} NAPI polls used their whole budget {} on CPU {} (threshold {}): RX work is left behind",
                          device, Rate(rate), cpu, ctx.thresholds->Format("nic.full_budget_rate"));
    out.push_back(std::move(f));
  }

  // Drops of one reason (summed over devices; the busiest device named).
  const double drop_limit = ctx.thresholds->Get("nic.drop_rate");
  std::map<uint32_t, std::map<std::string, uint64_t>> drops;
  for (const auto& c : d.net.drops) drops[c.reason][model::DeviceLabel(c.dev, names)] += c.packets;
  for (const auto& [reason, by_dev] : drops) {
    uint64_t total = 0;
    for (const auto& [dev, n] : by_dev) total += n;
    double rate = static_cast<double>(total) / secs;
    if (rate <= drop_limit) continue;
    auto top = std::max_element(by_dev.begin(), by_dev.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    std::string reason_name = model::DropReasonLabel(reason, names);
    Finding f = Base(ctx, "nic_trouble", "drops");
    f.device = top->first;
    f.culprit = reason_name;
    f.culprit_kind = "device";
    f.metrics = {{"drops_per_s", rate}};
    f.title = fmt::format("{} packets dropped {} (threshold {}), most on {}", reason_name, Rate(rate),
                          ctx.thresholds->Format("nic.drop_rate"), top->first);
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
      if (static_cast<double>(t.first) < ctx.thresholds->Get("nic.irq_overlap_min") ||
          share < ctx.thresholds->Get("nic.irq_overlap_share"))
        continue;
      Finding f = Base(ctx, "nic_trouble", "nic_irq_on_focus_cpu");
      f.device = device;
      f.cpus.assign(cpus.begin(), cpus.end());
      f.culprit = device;
      f.culprit_kind = "hardirq";
      f.cost_ns = t.second + net_softirq;
      f.cost_share = share;
      f.metrics = {{"interrupts", static_cast<double>(t.first)}, {"share", share}};
      f.title = fmt::format("{} interrupts ({}) served on CPUs where focus threads run, costing {} of their time",
                            device, t.first, Percent(share));
      out.push_back(std::move(f));
    }
  }

  // The kernel's own trouble counters.
  for (const auto& [name, n] : d.kernel) {
    if (!n) continue;
    std::string kind = name;
    if (kind.size() > 6 && kind.compare(kind.size() - 6, 6, "_count") == 0) kind.resize(kind.size() - 6);
    Finding f = Base(ctx, "nic_trouble", "kernel_" + kind);
    f.culprit = "kernel";
    f.culprit_kind = "kernel";
    f.metrics = {{kind, static_cast<double>(n)}};
    f.title = fmt::format("the kernel counted {} new {} event{} (/sys/kernel/{})", n, kind, n == 1 ? "" : "s", name);
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

}  // namespace gpunoise::analyze
