// idle_exit: a focus thread's wakeup onto an idle CPU waits for that CPU to
// come out of its idle state (the IPI's delivery, the C-state's exit
// latency, on a VM the host rescheduling the vCPU) before the scheduler can
// even run. power:cpu_idle's exit event marks when the CPU was back: the
// part of the wakeup-to-switch-in latency before it is the exit's.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyze/cpu_state_detectors.h"
#include "analyze/format_util.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectIdleExit(const AnalysisContext& ctx, const CpuStateData& d) {
  std::vector<Finding> out;
  if (ctx.activities.empty() || d.idle.empty()) return out;
  const Timeline& t = ctx.t();
  const uint64_t min_delay = ctx.th().GetNs("idle_exit.min_delay");
  const double min_share = ctx.th().Get("idle_exit.min_share");
  const double min_portion = ctx.th().Get("idle_exit.min_portion");
  const int32_t min_state = static_cast<int32_t>(std::clamp(ctx.th().Get("idle_exit.min_state"), 0.0, 1024.0));
  const double observed = static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));

  // The wakeups of each focus thread, to tell a wait that began with one
  // from the pieces a migration split off it.
  std::map<int32_t, std::set<uint64_t>> woken;
  for (const Wakeup& w : t.wakeups)
    if (w.ts >= ctx.from && w.ts < ctx.to && ctx.focus.count(w.tid)) woken[w.tid].insert(w.ts);

  struct PerState {
    uint64_t count = 0, exit_ns = 0, worst = 0;
  };
  std::map<std::pair<uint32_t, int32_t>, PerState> by_state;  // (cpu, state)
  std::map<int32_t, uint64_t> by_tid;
  uint64_t cost = 0, onto_idle = 0, counted = 0, latency_ns = 0, first = UINT64_MAX, last = 0;
  uint64_t wakeups = 0;
  for (const auto& [tid, act] : ctx.activities) {
    auto wk = woken.find(tid);
    if (wk == woken.end()) continue;
    for (const ThreadWait& w : act.waits) {
      if (w.after_preemption || !wk->second.count(w.start) || w.end <= w.start) continue;
      ++wakeups;
      const IdleSpan* idle = d.IdleAt(w.cpu, w.start);
      if (!idle) continue;
      ++onto_idle;
      if (idle->state < min_state) continue;
      const uint64_t latency = w.end - w.start;
      const uint64_t exit = std::min(idle->end, w.end) - w.start;
      if (static_cast<double>(exit) < min_portion * static_cast<double>(latency)) continue;
      ++counted;
      cost += exit;
      latency_ns += latency;
      by_tid[tid] += exit;
      PerState& s = by_state[{w.cpu, idle->state}];
      ++s.count;
      s.exit_ns += exit;
      s.worst = std::max(s.worst, exit);
      first = std::min(first, w.start);
      last = std::max(last, w.end);
    }
  }
  const double share = static_cast<double>(cost) / observed;
  if (!counted || cost < min_delay || share < min_share) return out;
  Finding f;
  f.detector = "idle_exit";
  f.kind = "idle_exit";
  std::set<uint32_t> cpus;
  int32_t deepest = -1;
  uint32_t deepest_cpu = 0;
  for (const auto& [key, _] : by_state) {
    cpus.insert(key.first);
    if (key.second > deepest) deepest = key.second, deepest_cpu = key.first;
  }
  f.cpus.assign(cpus.begin(), cpus.end());
  for (const auto& [tid, _] : by_tid) f.focus_tids.push_back(tid);
  f.culprit = fmt::format("CPU idle states (exits from {} and shallower)", d.StateName(deepest_cpu, deepest));
  f.culprit_kind = "hardware";
  f.start = first;
  f.end = last;
  f.cost_ns = cost;
  f.cost_share = share;
  f.title = fmt::format("{} wakeups of focus threads onto idle {} waited {} for the CPU to leave its idle state "
                        "({} of those wakeups' latency, {} of the threads' time)",
                        counted, CpuPhrase(f.cpus), FormatNs(cost),
                        FormatShare(static_cast<double>(cost) / static_cast<double>(std::max<uint64_t>(1, latency_ns))),
                        FormatShare(share));
  f.metrics = {{"exit_ns", static_cast<double>(cost)},
               {"wakeups", static_cast<double>(counted)},
               {"wakeups_onto_idle", static_cast<double>(onto_idle)},
               {"wakeups_total", static_cast<double>(wakeups)},
               {"latency_ns", static_cast<double>(latency_ns)},
               {"share", share}};
  for (const auto& [key, s] : by_state) {
    auto named = d.idle_states.find({key.first, key.second});
    std::string latency = named != d.idle_states.end() && named->second.exit_latency_us
                              ? fmt::format(" (the driver states {} us)", named->second.exit_latency_us)
                              : "";
    f.evidence.push_back(fmt::format("CPU {} {}{}: {} wakeups, {} waiting for the exit, {} mean, {} worst",
                                     key.first, d.StateName(key.first, key.second), latency, s.count,
                                     FormatNs(s.exit_ns), FormatNs(s.exit_ns / s.count), FormatNs(s.worst)));
  }
  for (const auto& [tid, ns] : by_tid)
    f.evidence.push_back(fmt::format("{}: {} waiting for idle exits", t.DescribeThread(tid), FormatNs(ns)));
  f.evidence.push_back(fmt::format("{} of {} wakeups of focus threads found their CPU idle; counted: state >= {} and "
                                   "the exit at least {} of the wakeup's latency (power:cpu_idle)",
                                   onto_idle, wakeups, min_state, FormatShare(min_portion)));
  out.push_back(std::move(f));
  return out;
}

}  // namespace gpunoise::analyze
