#include "analyze/wakeup_chain_detector.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyze/attribution.h"
#include "analyze/format_util.h"
#include "model/events.h"

namespace gpunoise::analyze {
namespace {

constexpr uint16_t kInterruptFlags = model::kFlagHardirq | model::kFlagSoftirq | model::kFlagNmi;

struct Run {
  uint64_t start, end;
  uint32_t cpu;
};

// Run slices of `tids`, each thread's sorted by start.
std::map<int32_t, std::vector<Run>> RunsOf(const Timeline& t, const std::set<int32_t>& tids) {
  std::map<int32_t, std::vector<Run>> out;
  for (uint32_t cpu = 0; cpu < t.cpus.size(); ++cpu)
    for (const RunSlice& r : t.cpus[cpu].runs)
      if (r.tid > 0 && tids.count(r.tid)) out[r.tid].push_back({r.start, r.end, cpu});
  for (auto& [_, v] : out) std::sort(v.begin(), v.end(), [](const Run& a, const Run& b) { return a.start < b.start; });
  return out;
}

// Who made a wakeup, in words: the interrupt for one from interrupt
// context, else the task current on the waker's CPU.
std::string WakerName(const Timeline& t, const Wakeup& w) {
  if (w.flags & kInterruptFlags) {
    const auto& c = t.cpus[w.waker_cpu];
    const auto& slices = (w.flags & model::kFlagSoftirq) && !(w.flags & model::kFlagHardirq) ? c.softirqs : c.hardirqs;
    size_t i = FirstEndingAfter(slices, w.ts);
    bool soft = &slices == &c.softirqs;
    if (i < slices.size() && slices[i].start <= w.ts)
      return soft ? DescribeCulprit(t, {Culprit::Kind::kSoftirq, slices[i].id})
                  : DescribeCulprit(t, {Culprit::Kind::kHardirq, slices[i].id});
    return soft ? "a softirq" : "a hard IRQ";
  }
  return w.waker_tid > 0 ? t.DescribeThread(w.waker_tid) : "an unknown task";
}

struct Link {
  const Wakeup* woke_b = nullptr;  // A -> B
  uint64_t b_ran = 0;              // B's first run after it
  uint32_t b_cpu = 0;
  uint64_t cost = 0;               // the part of B's wait the focus thread sat blocked through
};

}  // namespace

std::vector<Finding> DetectWakeupChains(const AnalysisContext& ctx) {
  std::vector<Finding> out;
  if (ctx.activities.empty()) return out;
  const Timeline& t = ctx.t();
  const uint64_t min_link = ctx.th().GetNs("wakeup_chain.min_link");
  const uint64_t min_delay = ctx.th().GetNs("wakeup_chain.min_delay");
  const double min_share = ctx.th().Get("wakeup_chain.min_share");
  const double observed = static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));

  // Wakeups of focus threads made by a task (in task context).
  std::vector<const Wakeup*> focus_wakeups;
  std::set<int32_t> wakers;
  for (const Wakeup& w : t.wakeups) {
    if (w.ts < ctx.from || w.ts >= ctx.to || !ctx.focus.count(w.tid)) continue;
    if ((w.flags & kInterruptFlags) || w.waker_tid <= 0 || w.waker_tid == w.tid) continue;
    if (w.waker_cpu >= t.cpus.size()) continue;
    focus_wakeups.push_back(&w);
    wakers.insert(w.waker_tid);
  }
  if (focus_wakeups.empty()) return out;
  std::map<int32_t, std::vector<const Wakeup*>> wakeups_of;
  for (const Wakeup& w : t.wakeups)
    if (wakers.count(w.tid)) wakeups_of[w.tid].push_back(&w);
  std::map<int32_t, std::vector<Run>> runs = RunsOf(t, wakers);

  struct PerLink {
    uint64_t cost = 0, link_ns = 0, chains = 0;
    std::map<int32_t, uint64_t> by_focus;
    std::map<uint32_t, uint64_t> by_cpu;
    std::map<std::string, uint64_t> first_wakers;  // A, by name
    Breakdown behind;                              // what had B's CPU while B waited
    uint64_t first = UINT64_MAX, last = 0;
    std::vector<FindingWindow> worst;
  };
  std::map<int32_t, PerLink> per;  // by B
  std::map<int32_t, uint64_t> wakeups_by_focus;

  for (const Wakeup* w : focus_wakeups) {
    ++wakeups_by_focus[w->tid];
    const int32_t b = w->waker_tid;
    // B's run that made the wakeup, and the wakeup of B before it.
    const auto& rb = runs[b];
    auto run_it = std::upper_bound(rb.begin(), rb.end(), w->ts, [](uint64_t ts, const Run& r) { return ts < r.start; });
    if (run_it == rb.begin()) continue;
    const Run& b_run = *std::prev(run_it);
    if (b_run.end < w->ts) continue;  // B was not running then (data gap)
    const auto& wb = wakeups_of[b];
    auto wb_it = std::upper_bound(wb.begin(), wb.end(), b_run.start, [](uint64_t ts, const Wakeup* x) { return ts < x->ts; });
    if (wb_it == wb.begin()) continue;
    const Wakeup* woke_b = *std::prev(wb_it);
    // That wakeup must have been answered by this very run (B did not run
    // between being woken and waking the focus thread).
    if (std::prev(run_it) != rb.begin() && std::prev(std::prev(run_it))->end > woke_b->ts) continue;
    uint64_t b_wait = b_run.start - woke_b->ts;
    if (b_wait < min_link) continue;
    // The focus thread's blocked time: from its last run's end before the
    // wakeup.
    const ThreadActivity& act = ctx.activities.at(w->tid);
    uint64_t blocked_from = 0;
    for (const ThreadRun& r : act.runs)
      if (r.end <= w->ts) blocked_from = std::max(blocked_from, r.end);
    uint64_t cost = Overlap(woke_b->ts, b_run.start, std::max(blocked_from, ctx.from), w->ts);
    if (!cost) continue;
    PerLink& p = per[b];
    p.cost += cost;
    p.link_ns += b_wait;
    ++p.chains;
    p.by_focus[w->tid] += cost;
    p.by_cpu[b_run.cpu] += b_wait;
    p.first_wakers[WakerName(t, *woke_b)] += 1;
    AttributeCpu(t, b_run.cpu, woke_b->ts, b_run.start, &p.behind);
    p.first = std::min(p.first, woke_b->ts);
    p.last = std::max(p.last, w->ts);
    p.worst.push_back({woke_b->ts, w->ts, cost,
                       fmt::format("{} ran {} after its wakeup, on CPU {}; woke {} {} later", t.ThreadName(b),
                                   FormatNs(b_wait), b_run.cpu, t.ThreadName(w->tid), FormatNs(w->ts - b_run.start))});
  }

  for (auto& [b, p] : per) {
    double share = static_cast<double>(p.cost) / observed;
    if (p.cost < min_delay || share < min_share) continue;
    // What kept B waiting: the top culprit other than B itself and idle.
    Culprit top{Culprit::Kind::kUnknown, 0};
    uint64_t top_ns = 0;
    for (const auto& [who, ns] : p.behind) {
      if (who.kind == Culprit::Kind::kTask && who.id == b) continue;
      if (who.kind == Culprit::Kind::kIdle || who.kind == Culprit::Kind::kUnknown) continue;
      if (ns > top_ns) top = who, top_ns = ns;
    }
    std::string first_waker = std::max_element(p.first_wakers.begin(), p.first_wakers.end(),
                                               [](const auto& x, const auto& y) { return x.second < y.second; })->first;
    Finding f;
    f.detector = "wakeup_chain";
    f.kind = "late_waker";
    if (top_ns) {
      f.culprit = DescribeCulprit(t, top);
      f.culprit_kind = std::string(CulpritKindName(top.kind));
      if (top.kind == Culprit::Kind::kTask) f.culprit_tid = top.id;
      if (top.kind == Culprit::Kind::kHardirq) f.culprit_irq = top.id;
    } else {
      f.culprit = t.DescribeThread(b);
      f.culprit_kind = "task";
      f.culprit_tid = b;
    }
    for (const auto& [cpu, _] : p.by_cpu) f.cpus.push_back(cpu);
    for (const auto& [tid, _] : p.by_focus) f.focus_tids.push_back(tid);
    f.start = p.first;
    f.end = p.last;
    f.cost_ns = p.cost;
    f.cost_share = share;
    std::string victims = f.focus_tids.size() == 1 ? t.DescribeThread(f.focus_tids[0])
                                                   : fmt::format("{} focus threads", f.focus_tids.size());
    f.title = fmt::format("{} woke late {} times: its waker {} waited {} in the run queue of {} after {} woke it{} "
                          "({} of their time)",
                          victims, p.chains, t.DescribeThread(b), FormatNs(p.link_ns), CpuPhrase(f.cpus), first_waker,
                          top_ns ? fmt::format(", behind {}", f.culprit) : "", FormatShare(share));
    f.metrics = {{"late_waker_tid", static_cast<double>(b)},
                 {"chains", static_cast<double>(p.chains)},
                 {"link_wait_ns", static_cast<double>(p.link_ns)},
                 {"blocked_ns", static_cast<double>(p.cost)},
                 {"behind_culprit_ns", static_cast<double>(top_ns)},
                 {"share", share}};
    for (const auto& [tid, ns] : p.by_focus)
      f.evidence.push_back(fmt::format("{}: blocked {} longer, in {} of its {} wakeups by a task", t.DescribeThread(tid),
                                       FormatNs(ns), p.chains, wakeups_by_focus[tid]));
    f.evidence.push_back(fmt::format("chain: {} -> {} (late: waited {} in a run queue) -> {}", first_waker,
                                     t.DescribeThread(b), FormatNs(p.link_ns), victims));
    for (const auto& [who, ns] : Ranked(p.behind)) {
      if (f.evidence.size() >= 5) break;
      f.evidence.push_back(fmt::format("while {} waited, its CPU ran {} for {}", t.ThreadName(b), DescribeCulprit(t, who),
                                       FormatNs(ns)));
    }
    std::sort(p.worst.begin(), p.worst.end(), [](const auto& x, const auto& y) { return x.cost_ns > y.cost_ns; });
    for (size_t i = 0; i < p.worst.size() && i < 3; ++i) {
      f.windows.push_back(p.worst[i]);
    }
    for (uint32_t cpu : f.cpus)
      if (ctx.LossDuring(cpu, f.start, f.end))
        f.evidence.push_back(fmt::format("events were lost on CPU {} in this span: the figures are a lower bound", cpu));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpunoise::analyze
