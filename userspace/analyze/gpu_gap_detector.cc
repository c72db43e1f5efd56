#include "analyze/gpu_gap_detector.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyze/attribution.h"
#include "analyze/format_util.h"

namespace gpunoise::analyze {
namespace {

struct Gap {
  uint64_t start, end;
  int32_t launcher;
  uint64_t launch_ts;
};

struct LauncherStates {
  uint64_t running = 0, blocked = 0, unknown = 0, launched_early = 0;
  Breakdown waiting, interrupted;
};

// What `act` was doing over [a, b).
void Classify(const Timeline& t, const ThreadActivity& act, uint64_t a, uint64_t b, LauncherStates* s) {
  uint64_t accounted = 0;
  for (const ThreadRun& r : act.runs) {
    if (r.end <= a || r.start >= b) continue;
    uint64_t x = std::max(r.start, a), y = std::min(r.end, b);
    Breakdown bd;
    AttributeInterrupts(t, r.cpu, x, y, &bd);
    uint64_t irq = 0;
    for (const auto& [who, ns] : bd) {
      s->interrupted[who] += ns;
      irq += ns;
    }
    s->running += (y - x) - std::min(y - x, irq);
    accounted += y - x;
  }
  for (const ThreadWait& w : act.waits) {
    if (w.end <= a || w.start >= b) continue;
    uint64_t x = std::max(w.start, a), y = std::min(w.end, b);
    Breakdown bd;
    AttributeCpu(t, w.cpu, x, y, &bd);
    for (const auto& [who, ns] : bd)
      if (!(who.kind == Culprit::Kind::kTask && who.id == act.tid)) s->waiting[who] += ns;
    accounted += y - x;
  }
  uint64_t rest = (b - a) - std::min(b - a, accounted);
  // Neither running nor runnable while the thread was alive: it was blocked.
  if (act.first_seen && a >= act.first_seen && b <= act.last_seen) s->blocked += rest;
  else s->unknown += rest;
}

uint64_t Sum(const Breakdown& b, bool culprits_only) {
  uint64_t sum = 0;
  for (const auto& [who, ns] : b)
    if (!culprits_only || (who.kind != Culprit::Kind::kIdle && who.kind != Culprit::Kind::kUnknown)) sum += ns;
  return sum;
}

}  // namespace

std::vector<Finding> DetectGpuIdleGaps(const AnalysisContext& ctx) {
  std::vector<Finding> out;
  if (!ctx.gpu.present()) return out;
  const Timeline& t = ctx.t();
  const uint64_t min_gap = ctx.th().GetNs("gpu.min_gap");
  const uint64_t min_delay = ctx.th().GetNs("gpu.min_delay");
  const double min_delay_share = ctx.th().Get("gpu.min_delay_share");
  const double min_idle_share = ctx.th().Get("gpu.min_idle_share");

  // Per process and GPU: an 8-GPU process whose GPU 3 idles while the others
  // work has a gap on GPU 3 (the union over its GPUs would show none).
  std::map<std::pair<int32_t, uint64_t>, std::vector<const GpuWork*>> by_pid;
  for (const GpuWork& w : ctx.gpu.work)
    if (w.end > ctx.from && w.start < ctx.to) by_pid[{w.pid, w.gpu}].push_back(&w);

  // Launching threads need their activity even when they are not focus.
  std::set<int32_t> launchers;
  for (const GpuWork& w : ctx.gpu.work)
    if (w.launch_tid) launchers.insert(w.launch_tid);
  auto extra = BuildActivities(t, launchers, ctx.from, ctx.to);

  for (const auto& [key, works] : by_pid) {
    const int32_t pid = key.first;
    auto gpu_name = ctx.gpu.gpu_names.find(key.second);
    // The union of the process's work on this GPU; gaps between its pieces.
    std::vector<Gap> gaps;
    uint64_t busy_end = std::max(works.front()->end, ctx.from);
    uint64_t active_start = std::max(works.front()->start, ctx.from), busy = 0, seg_start = active_start;
    for (size_t i = 1; i < works.size(); ++i) {
      const GpuWork* w = works[i];
      if (w->start > busy_end) {
        busy += busy_end - seg_start;
        if (w->start - busy_end >= min_gap) gaps.push_back({busy_end, std::min(w->start, ctx.to), w->launch_tid, w->launch_ts});
        seg_start = w->start;
      }
      busy_end = std::max(busy_end, w->end);
    }
    busy_end = std::min(busy_end, ctx.to);
    busy += busy_end > seg_start ? busy_end - seg_start : 0;
    uint64_t active = busy_end > active_start ? busy_end - active_start : 0;
    uint64_t idle = 0;
    for (const Gap& g : gaps) idle += g.end - g.start;
    if (!active || gaps.empty()) continue;

    LauncherStates states;
    std::map<int32_t, uint64_t> gap_ns_by_launcher;
    uint64_t unattributed = 0;
    const Gap* worst = &gaps.front();
    for (const Gap& g : gaps) {
      if (g.end - g.start > worst->end - worst->start) worst = &g;
      if (!g.launcher) {
        unattributed += g.end - g.start;
        continue;
      }
      // The launcher is accountable until it issued the launch that ended
      // the gap; a launch issued before the gap began waited on the GPU side.
      uint64_t until = g.launch_ts && g.launch_ts < g.end ? std::max(g.launch_ts, g.start) : g.end;
      if (g.launch_ts && g.launch_ts <= g.start) {
        states.launched_early += g.end - g.start;
        continue;
      }
      const ThreadActivity* act = nullptr;
      if (auto it = ctx.activities.find(g.launcher); it != ctx.activities.end()) act = &it->second;
      else if (auto it2 = extra.find(g.launcher); it2 != extra.end()) act = &it2->second;
      if (!act) continue;
      gap_ns_by_launcher[g.launcher] += g.end - g.start;
      Classify(t, *act, g.start, until, &states);
      if (until < g.end) states.launched_early += g.end - until;
    }
    uint64_t waiting = Sum(states.waiting, true), interrupted = Sum(states.interrupted, true);
    uint64_t delay = waiting + interrupted;
    double idle_share = static_cast<double>(idle) / static_cast<double>(active);
    if (idle_share < min_idle_share && delay < min_delay) continue;
    // Others held the launcher up enough to matter only if that is a real
    // part of its gap time: a launcher that ran its own code through most of
    // the gaps (a CPU-bound launch loop) starved its GPUs itself, whatever
    // timer ticks also landed on it. Seen on an H200: a PyTorch loop's GPU
    // idle 95% with the launcher running 6.9 s of the gaps was blamed on
    // 24 ms of local-timer interrupts.
    uint64_t launcher_gap_ns = states.running + delay + states.blocked + states.unknown;
    bool held_up = delay >= min_delay &&
                   static_cast<double>(delay) >= min_delay_share * static_cast<double>(launcher_gap_ns);

    Breakdown culprits = states.waiting;
    for (const auto& [who, ns] : states.interrupted) culprits[who] += ns;
    auto ranked = Ranked(culprits);
    Finding f;
    f.detector = "gpu_idle_gap";
    f.kind = held_up ? "launcher_delayed" : "gpu_idle";
    f.start = works.front()->start;
    f.end = busy_end;
    f.cost_ns = delay;
    f.cost_share = static_cast<double>(delay) / static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));
    for (const auto& [tid, _] : gap_ns_by_launcher) f.focus_tids.push_back(tid);
    std::string proc = pid ? fmt::format("{} (pid {})", t.ProcessName(pid), pid) : "an unknown process";
    std::string gpus = gpu_name != ctx.gpu.gpu_names.end() ? gpu_name->second + " of " + proc : "GPUs of " + proc;
    f.title = fmt::format("{} sat idle {} of {} active {} ({} gaps of at least {})", gpus,
                          FormatShare(idle_share), gpu_name != ctx.gpu.gpu_names.end() ? "its" : "their",
                          FormatNs(active), gaps.size(), FormatNs(min_gap));
    const Culprit* top = nullptr;
    for (const auto& [who, ns] : ranked)
      if (who.kind != Culprit::Kind::kIdle && who.kind != Culprit::Kind::kUnknown) {
        top = &who;
        break;
      }
    if (top && held_up) {
      f.culprit = DescribeCulprit(t, *top);
      f.culprit_kind = std::string(CulpritKindName(top->kind));
      if (top->kind == Culprit::Kind::kTask) f.culprit_tid = top->id;
      if (top->kind == Culprit::Kind::kHardirq) f.culprit_irq = top->id;
      f.title += fmt::format("; meanwhile its launching thread was held up {} by {}", FormatNs(delay), f.culprit);
    } else {
      f.culprit = "launching thread";
      f.culprit_kind = "task";
      f.title += fmt::format("; its launching thread was running {} and blocked {} of that time",
                             FormatNs(states.running), FormatNs(states.blocked));
      if (delay) f.title += fmt::format(", held up by others only {}", FormatNs(delay));
    }
    f.metrics = {{"idle_ns", static_cast<double>(idle)},
                 {"active_ns", static_cast<double>(active)},
                 {"idle_share", idle_share},
                 {"gaps", static_cast<double>(gaps.size())},
                 {"launcher_running_ns", static_cast<double>(states.running)},
                 {"launcher_waiting_ns", static_cast<double>(waiting)},
                 {"launcher_interrupted_ns", static_cast<double>(interrupted)},
                 {"launcher_blocked_ns", static_cast<double>(states.blocked)},
                 {"gpu_side_ns", static_cast<double>(states.launched_early)}};
    f.windows.push_back({worst->start, worst->end, 0, fmt::format("longest gap: {}", FormatNs(worst->end - worst->start))});
    f.evidence.push_back(fmt::format(
        "during the gaps the launching thread was: running {}, waiting in a run queue {}, interrupted {}, "
        "blocked (sleeping in a syscall or on a lock) {}, unknown {}",
        FormatNs(states.running), FormatNs(waiting), FormatNs(interrupted), FormatNs(states.blocked),
        FormatNs(states.unknown)));
    if (states.launched_early)
      f.evidence.push_back(fmt::format("{} of gap time came after the next launch was already issued (the GPU "
                                       "side was waiting: a sync, a copy, or another stream)",
                                       FormatNs(states.launched_early)));
    if (unattributed)
      f.evidence.push_back(fmt::format("{} of gaps end with work whose launching thread is unknown", FormatNs(unattributed)));
    for (size_t i = 0; i < ranked.size() && i < 3; ++i)
      f.evidence.push_back(fmt::format("held up by {}: {}", DescribeCulprit(t, ranked[i].first), FormatNs(ranked[i].second)));
    for (const auto& [tid, ns] : gap_ns_by_launcher)
      f.evidence.push_back(fmt::format("launcher {}: {} of gaps", t.DescribeThread(tid), FormatNs(ns)));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpunoise::analyze
