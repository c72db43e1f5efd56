#include "analyze/kernel_work_detector.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "analyze/format_util.h"

namespace gpunoise::analyze {
namespace {

using model::KernelWorkKind;

bool Targets(const KernelWorkSpan& send, uint32_t cpu) {
  // Bit 63 stands for CPU 63 and every CPU above it (bpf/kwork.h).
  return (send.targets >> std::min<uint32_t>(cpu, 63)) & 1;
}

// One finding's tally.
struct Tally {
  uint64_t count = 0, cost = 0, longest = 0, first = UINT64_MAX, last = 0;
  std::map<int32_t, uint64_t> by_tid;
  std::map<uint32_t, uint64_t> by_cpu;
  std::vector<FindingWindow> worst;

  void Add(uint64_t start, uint64_t end, uint64_t cost_ns, uint32_t cpu, int32_t victim) {
    ++count;
    cost += cost_ns;
    longest = std::max(longest, cost_ns);
    first = std::min(first, start);
    last = std::max(last, end);
    by_tid[victim] += cost_ns;
    by_cpu[cpu] += cost_ns;
  }
};

// The focus threads' run-queue waits by CPU, sorted by start (they do not
// overlap per thread, but may across threads).
std::map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> WaitsByCpu(const AnalysisContext& ctx,
                                                                         std::map<uint32_t, std::vector<int32_t>>* who) {
  std::map<uint32_t, std::vector<std::tuple<uint64_t, uint64_t, int32_t>>> all;
  for (const auto& [tid, act] : ctx.activities)
    for (const ThreadWait& w : act.waits) all[w.cpu].push_back({w.start, w.end, tid});
  std::map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> out;
  for (auto& [cpu, v] : all) {
    std::sort(v.begin(), v.end());
    for (const auto& [s, e, tid] : v) {
      out[cpu].push_back({s, e});
      (*who)[cpu].push_back(tid);
    }
  }
  return out;
}

// Time of [s, e) during which some focus thread waited on `waits` (one
// wait counted at a time); *victim: the thread of the longest overlap.
uint64_t WaitOverlap(const std::vector<std::pair<uint64_t, uint64_t>>& waits, const std::vector<int32_t>& tids,
                     uint64_t s, uint64_t e, int32_t* victim) {
  uint64_t covered = 0, best = 0, cursor = s;
  // Waits are sorted by start; one longer than the span may begin before it.
  auto it = std::lower_bound(waits.begin(), waits.end(), std::make_pair(s, uint64_t{0}));
  size_t i = static_cast<size_t>(it - waits.begin());
  size_t back = i > 64 ? i - 64 : 0;  // earlier waits still open at s
  for (size_t j = back; j < waits.size() && waits[j].first < e; ++j) {
    uint64_t a = std::max({waits[j].first, s, cursor}), b = std::min(waits[j].second, e);
    if (b <= a) continue;
    covered += b - a;
    cursor = b;
    if (b - a > best) best = b - a, *victim = tids[j];
  }
  return covered;
}

void Finish(Tally& t, Finding& f, const AnalysisContext& ctx) {
  for (const auto& [cpu, _] : t.by_cpu) f.cpus.push_back(cpu);
  for (const auto& [tid, _] : t.by_tid) f.focus_tids.push_back(tid);
  f.start = t.first;
  f.end = t.last;
  f.cost_ns = t.cost;
  f.cost_share = static_cast<double>(t.cost) / static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));
  for (const auto& [tid, ns] : t.by_tid)
    f.evidence.push_back(fmt::format("{}: {} of its {} observed", ctx.t().DescribeThread(tid), FormatNs(ns),
                                     FormatNs(ctx.activities.at(tid).observed_ns())));
  std::sort(t.worst.begin(), t.worst.end(), [](const auto& x, const auto& y) { return x.cost_ns > y.cost_ns; });
  for (size_t i = 0; i < t.worst.size() && i < 3; ++i) f.windows.push_back(t.worst[i]);
}

bool InWindow(const AnalysisContext& ctx, const KernelWorkSpan& w) { return w.end > ctx.from && w.start < ctx.to; }

// What each interrupt-context callback cost: its share (by its own time) of
// the hard-irq slice around it (local_timer, call_function: entry, exit and
// the wakeups it made, which the callback's own bracket leaves out); its
// own time where the trace has no such slice (no irq collector, a softirq
// hrtimer). By index into t.kernel_work; 0 for the other entries.
std::vector<uint64_t> InterruptCosts(const Timeline& t, KernelWorkKind kind) {
  std::vector<uint64_t> cost(t.kernel_work.size(), 0);
  std::vector<int64_t> slice(t.kernel_work.size(), -1);
  std::map<std::pair<uint32_t, int64_t>, uint64_t> callbacks_ns;  // (cpu, slice) -> sum of callbacks inside
  for (size_t i = 0; i < t.kernel_work.size(); ++i) {
    const KernelWorkSpan& w = t.kernel_work[i];
    if (w.kind != kind) continue;
    cost[i] = w.end - w.start;
    if (w.cpu >= t.cpus.size()) continue;
    const auto& irqs = t.cpus[w.cpu].hardirqs;
    auto it = std::upper_bound(irqs.begin(), irqs.end(), w.start,
                               [](uint64_t ts, const IntrSlice& s) { return ts < s.start; });
    if (it == irqs.begin()) continue;
    --it;
    if (it->end < w.end) continue;  // not inside it
    slice[i] = it - irqs.begin();
    callbacks_ns[{w.cpu, slice[i]}] += w.end - w.start;
  }
  for (size_t i = 0; i < t.kernel_work.size(); ++i) {
    if (slice[i] < 0) continue;
    const KernelWorkSpan& w = t.kernel_work[i];
    const IntrSlice& s = t.cpus[w.cpu].hardirqs[static_cast<size_t>(slice[i])];
    uint64_t sum = callbacks_ns[{w.cpu, slice[i]}];
    uint64_t len = s.end - s.start;
    cost[i] = sum ? static_cast<uint64_t>(static_cast<double>(len) * static_cast<double>(w.end - w.start) /
                                          static_cast<double>(sum))
                  : len;
  }
  return cost;
}

}  // namespace

std::vector<Finding> DetectIpis(const AnalysisContext& ctx) {
  std::vector<Finding> out;
  const Timeline& t = ctx.t();
  if (ctx.activities.empty() || t.kernel_work.empty()) return out;
  const uint64_t min_delay = ctx.th().GetNs("ipi.min_delay");
  const double min_count = ctx.th().Get("ipi.min_count");
  const uint64_t max_gap = ctx.th().GetNs("ipi.max_send_gap");

  std::vector<const KernelWorkSpan*> sends;
  for (const KernelWorkSpan& w : t.kernel_work)
    if (w.kind == KernelWorkKind::kIpiSend) sends.push_back(&w);
  std::stable_sort(sends.begin(), sends.end(), [](const auto* a, const auto* b) { return a->start < b->start; });

  struct Key {
    int32_t sender;       // 0: no send matched, or an interrupt sent it
    std::string context;  // "hardirq", "softirq": an interrupt on CPU sender_cpu sent it
    uint32_t sender_cpu;
    std::string function;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, Tally> per;
  std::map<Key, std::string> callsites;
  uint64_t unmatched = 0;
  const std::vector<uint64_t> costs = InterruptCosts(t, KernelWorkKind::kIpiCallback);
  for (size_t index = 0; index < t.kernel_work.size(); ++index) {
    const KernelWorkSpan& w = t.kernel_work[index];
    if (w.kind != KernelWorkKind::kIpiCallback || !InWindow(ctx, w)) continue;
    // In hard-irq context current is the task interrupted.
    if (!ctx.focus.count(w.tid) || !ctx.activities.count(w.tid)) continue;
    // The sender: the latest send of this callback to this CPU before it.
    const KernelWorkSpan* from = nullptr;
    auto it = std::upper_bound(sends.begin(), sends.end(), w.start,
                               [](uint64_t ts, const KernelWorkSpan* s) { return ts < s->start; });
    for (int steps = 0; it != sends.begin() && steps < 256; ++steps) {
      const KernelWorkSpan* s = *--it;
      if (w.start - s->start > max_gap) break;
      // The same csd (its request) where both sides name one, else the
      // same function aimed at this CPU.
      if (Targets(*s, w.cpu) && s->function == w.function && (!w.csd || !s->csd || s->csd == w.csd)) {
        from = s;
        break;
      }
    }
    if (!from) ++unmatched;
    Key key{0, "", 0, w.function};
    if (from && from->context.empty()) key.sender = from->tid;
    if (from && !from->context.empty()) key.context = from->context, key.sender_cpu = from->cpu;
    Tally& tally = per[key];
    uint64_t d = costs[index];
    tally.Add(w.start, w.end, d, w.cpu, w.tid);
    if (from && !callsites.count(key)) callsites[key] = from->callsite;
    if (tally.worst.size() < 256) tally.worst.push_back({w.start, w.end, d, fmt::format("{} on CPU {}", w.function, w.cpu)});
  }
  for (auto& [key, tally] : per) {
    if (tally.cost < min_delay || static_cast<double>(tally.count) < min_count) continue;
    Finding f;
    f.detector = "ipi_tlb";
    const bool tlb = key.function.starts_with("flush_tlb");
    f.kind = tlb ? "tlb_shootdown" : "function_call";
    const std::string what = tlb ? "TLB-shootdown IPIs" : "function-call IPIs";
    const bool sent = key.sender || !key.context.empty();
    if (key.sender) {
      f.culprit = t.DescribeThread(key.sender);
      f.culprit_kind = "task";
      f.culprit_tid = key.sender;
    } else if (!key.context.empty()) {
      // Sent from an interrupt: the interrupt's, not the task it interrupted.
      f.culprit = fmt::format("{} on CPU {}", key.context, key.sender_cpu);
      f.culprit_kind = key.context;
    } else {
      f.culprit = "unknown sender";
      f.culprit_kind = "kernel";
    }
    Finish(tally, f, ctx);
    // A copy: clang 14 cannot capture a structured binding.
    const int32_t sender = key.sender;
    bool own = sender && std::any_of(ctx.focus.begin(), ctx.focus.end(), [&](int32_t tid) {
                 return t.TgidOf(tid) == t.TgidOf(sender);
               });
    f.title = fmt::format("{} {} ({}) interrupted focus threads on CPU {} for {}; sent by {}{}", tally.count, what,
                          key.function, fmt::join(f.cpus, ","), FormatNs(tally.cost), f.culprit,
                          own ? ", a thread of the focus process itself" : "");
    f.metrics = {{"ipis", static_cast<double>(tally.count)},
                 {"callback_ns", static_cast<double>(tally.cost)},
                 {"longest_ns", static_cast<double>(tally.longest)},
                 {"share", f.cost_share},
                 {"own_process", own ? 1.0 : 0.0}};
    f.evidence.push_back(fmt::format("callback {} run on the focus CPU in hard-irq context (csd tracepoints); "
                                     "cost: each callback's share of the hard-irq slice around it",
                                     key.function));
    if (sent)
      f.evidence.push_back(fmt::format("queued from {} (csd:csd_queue_cpu)", callsites[key]));
    else
      f.evidence.push_back(fmt::format("{} callbacks matched no send of the same function within {}", unmatched,
                                       FormatNs(max_gap)));
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> DetectKernelWork(const AnalysisContext& ctx) {
  std::vector<Finding> out;
  const Timeline& t = ctx.t();
  if (ctx.activities.empty() || t.kernel_work.empty()) return out;
  std::map<uint32_t, std::vector<int32_t>> wait_tids;
  const auto waits = WaitsByCpu(ctx, &wait_tids);
  const double observed = static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));

  using Key = std::tuple<KernelWorkKind, uint32_t, std::string>;  // kind, cpu, function
  std::map<Key, Tally> per;
  const std::vector<uint64_t> costs = InterruptCosts(t, KernelWorkKind::kHrtimer);
  for (size_t index = 0; index < t.kernel_work.size(); ++index) {
    const KernelWorkSpan& w = t.kernel_work[index];
    if (!InWindow(ctx, w)) continue;
    uint64_t s = std::max(w.start, ctx.from), e = std::min(w.end, ctx.to);
    if (w.kind == KernelWorkKind::kHrtimer) {
      // In interrupt context current is the task interrupted.
      if (!ctx.activities.count(w.tid) || e <= s) continue;
      Tally& tally = per[{w.kind, w.cpu, w.function}];
      tally.Add(s, e, costs[index], w.cpu, w.tid);
    } else if (w.kind == KernelWorkKind::kWorkItem) {
      auto it = waits.find(w.cpu);
      if (it == waits.end()) continue;
      int32_t victim = 0;
      uint64_t cost = WaitOverlap(it->second, wait_tids.at(w.cpu), s, e, &victim);
      if (!cost) continue;
      Tally& tally = per[{w.kind, w.cpu, w.function}];
      tally.Add(s, e, cost, w.cpu, victim);
      if (tally.worst.size() < 256)  // enough to pick the worst three from
        tally.worst.push_back({s, e, cost, fmt::format("{} by {}", w.function, t.DescribeThread(w.tid))});
    }
  }
  for (auto& [key, tally] : per) {
    const auto& [kind, cpu, function] = key;
    const bool timer = kind == KernelWorkKind::kHrtimer;
    const std::string prefix = timer ? "timer" : "workqueue";
    const uint64_t min_delay = ctx.th().GetNs(prefix + ".min_delay");
    const double min_share = ctx.th().Get(prefix + ".min_share");
    double share = static_cast<double>(tally.cost) / observed;
    if (tally.cost < min_delay || share < min_share) continue;
    Finding f;
    f.detector = prefix;
    f.kind = timer ? "hrtimer" : "work_item";
    f.culprit = function;
    f.culprit_kind = "kernel";
    Finish(tally, f, ctx);
    f.title = timer ? fmt::format("{} hrtimer callbacks {} interrupted focus threads on CPU {} for {} ({} of their time)",
                                  tally.count, function, cpu, FormatNs(tally.cost), FormatShare(share))
                    : fmt::format("{} work items {} ran on CPU {} while focus threads waited there: {} ({} of their "
                                  "time)",
                                  tally.count, function, cpu, FormatNs(tally.cost), FormatShare(share));
    f.metrics = {{timer ? "callbacks" : "work_items", static_cast<double>(tally.count)},
                 {timer ? "callback_ns" : "waited_ns", static_cast<double>(tally.cost)},
                 {"longest_ns", static_cast<double>(tally.longest)},
                 {"share", share}};
    f.evidence.push_back(timer ? "timer:hrtimer_expire_entry/exit on the CPU, the interrupted task a focus thread; "
                                 "cost: each callback's share of the hard-irq slice around it"
                               : "workqueue:workqueue_execute_start/end overlapping the focus threads' run-queue "
                                 "waits on that CPU");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpunoise::analyze
