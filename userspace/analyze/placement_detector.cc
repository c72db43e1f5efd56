#include "analyze/placement_detector.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyze/attribution.h"
#include "analyze/format_util.h"
#include "analyze/throttling_detector.h"
#include "common/cpu_list.h"

namespace gpunoise::analyze {
namespace {

struct Span {
  uint64_t start, end;
  uint32_t cpu;
};

// Idle stretches of `cpu` within [a, b), clipped.
void IdleOn(const Timeline& t, uint32_t cpu, uint64_t a, uint64_t b, std::vector<Span>* out) {
  if (cpu >= t.cpus.size()) return;
  const auto& runs = t.cpus[cpu].runs;
  for (size_t i = FirstEndingAfter(runs, a); i < runs.size() && runs[i].start < b; ++i)
    if (runs[i].tid == 0) out->push_back({std::max(a, runs[i].start), std::min(b, runs[i].end), cpu});
}

}  // namespace

std::vector<Finding> DetectPlacement(const AnalysisContext& ctx, const NodeMetadata& node) {
  std::vector<Finding> out;
  if (ctx.activities.empty() || node.affinity.empty()) return out;
  const Timeline& t = ctx.t();
  const uint64_t min_delay = ctx.th().GetNs("placement.min_delay");
  const double min_share = ctx.th().Get("placement.min_share");
  const uint64_t min_idle = ctx.th().GetNs("placement.min_idle");
  const double observed = static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));

  // Waits the quota explains, by thread: not placement.
  std::map<int32_t, std::vector<std::pair<uint64_t, uint64_t>>> throttled;
  for (const ThrottledWait& w : ThrottledWaits(ctx, node)) throttled[w.tid].push_back({w.start, w.end});

  for (const auto& [tid, act] : ctx.activities) {
    uint64_t ns = 0, waits = 0, first = UINT64_MAX, last = 0;
    std::map<uint32_t, uint64_t> by_idle_cpu, by_wait_cpu;
    Breakdown instead;
    std::vector<int> mask_seen;
    std::vector<FindingWindow> longest;
    const auto& skip = throttled[tid];
    for (const ThreadWait& w : act.waits) {
      uint64_t a = std::max(w.start, ctx.from), b = std::min(w.end, ctx.to);
      if (b <= a) continue;
      bool is_throttled = std::any_of(skip.begin(), skip.end(),
                                      [&](const auto& s) { return s.first < b && s.second > a; });
      if (is_throttled) continue;
      const std::vector<int>* mask = node.AffinityAt(tid, w.start);
      if (!mask) continue;
      std::vector<Span> idle;
      for (int c : *mask)
        if (c >= 0 && static_cast<uint32_t>(c) != w.cpu) IdleOn(t, static_cast<uint32_t>(c), a, b, &idle);
      if (idle.empty()) continue;
      // The union of the other CPUs' idle time within the wait; a stretch
      // counts for the CPU that was idle longest in it.
      std::sort(idle.begin(), idle.end(), [](const Span& x, const Span& y) { return x.start < y.start; });
      uint64_t in_wait = 0;
      for (size_t i = 0; i < idle.size();) {
        uint64_t s = idle[i].start, e = idle[i].end;
        std::map<uint32_t, uint64_t> per;
        size_t j = i;
        for (; j < idle.size() && idle[j].start <= e; ++j) {
          e = std::max(e, idle[j].end);
          per[idle[j].cpu] += idle[j].end - idle[j].start;
        }
        i = j;
        if (e - s < min_idle) continue;
        uint32_t top = std::max_element(per.begin(), per.end(), [](const auto& x, const auto& y) {
                         return x.second < y.second;
                       })->first;
        by_idle_cpu[top] += e - s;
        in_wait += e - s;
        AttributeCpu(t, w.cpu, s, e, &instead);
        if (longest.size() < 3 || e - s > longest.back().cost_ns) {
          longest.push_back({s, e, e - s, fmt::format("waited on CPU {} while CPU {} was idle", w.cpu, top)});
          std::sort(longest.begin(), longest.end(), [](const auto& x, const auto& y) { return x.cost_ns > y.cost_ns; });
          if (longest.size() > 3) longest.pop_back();
        }
        first = std::min(first, s);
        last = std::max(last, e);
      }
      if (!in_wait) continue;
      ns += in_wait;
      ++waits;
      by_wait_cpu[w.cpu] += in_wait;
      mask_seen = *mask;
    }
    double share = static_cast<double>(ns) / observed;
    if (ns < min_delay || share < min_share) continue;
    uint32_t idle_cpu = std::max_element(by_idle_cpu.begin(), by_idle_cpu.end(),
                                         [](const auto& x, const auto& y) { return x.second < y.second; })->first;
    Finding f;
    f.detector = "placement";
    f.kind = "placement";
    f.culprit = fmt::format("load balancing: CPU {} idle, allowed CPUs {}", idle_cpu, FormatCpuList(mask_seen));
    f.culprit_kind = "scheduler";
    for (const auto& [cpu, _] : by_wait_cpu) f.cpus.push_back(cpu);
    f.focus_tids = {tid};
    f.start = first;
    f.end = last;
    f.cost_ns = ns;
    f.cost_share = share;
    f.windows = longest;
    f.title = fmt::format("{} waited {} in the run queue of {} while CPU {} (in its affinity {}) sat idle "
                          "({} of its time): the scheduler did not move it",
                          t.DescribeThread(tid), FormatNs(ns), CpuPhrase(f.cpus), idle_cpu,
                          FormatCpuList(mask_seen), FormatShare(share));
    f.metrics = {{"idle_cpu_wait_ns", static_cast<double>(ns)},
                 {"waits", static_cast<double>(waits)},
                 {"idle_cpu", static_cast<double>(idle_cpu)},
                 {"allowed_cpus", static_cast<double>(mask_seen.size())},
                 {"share", share}};
    for (const auto& [cpu, idle_ns] : by_idle_cpu)
      f.evidence.push_back(fmt::format("CPU {} was idle for {} of those waits", cpu, FormatNs(idle_ns)));
    auto ranked = Ranked(instead);
    for (size_t i = 0; i < ranked.size() && i < 2; ++i)
      f.evidence.push_back(fmt::format("meanwhile on the thread's CPU: {} for {}", DescribeCulprit(t, ranked[i].first),
                                       FormatNs(ranked[i].second)));
    for (uint32_t cpu : f.cpus)
      if (ctx.LossDuring(cpu, f.start, f.end))
        f.evidence.push_back(fmt::format("events were lost on CPU {} in this span: the figures are a lower bound", cpu));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpunoise::analyze
