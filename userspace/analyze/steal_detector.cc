#include "analyze/steal_detector.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyze/format_util.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectSteal(const AnalysisContext& ctx, const NodeMetadata& node) {
  std::vector<Finding> out;
  if (ctx.activities.empty() || node.steal.empty()) return out;
  const uint64_t min_delay = ctx.th().GetNs("steal.min_delay");
  const double min_share = ctx.th().Get("steal.min_share");
  const double observed = static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));

  uint64_t ns = 0, run_ns = 0, first = UINT64_MAX, last = 0;
  std::map<uint32_t, uint64_t> by_cpu, run_by_cpu;
  std::map<int32_t, uint64_t> by_tid;
  for (const auto& [tid, act] : ctx.activities)
    for (const ThreadRun& r : act.runs) {
      uint64_t a = std::max(r.start, ctx.from), b = std::min(r.end, ctx.to);
      if (b <= a) continue;
      run_ns += b - a;
      run_by_cpu[r.cpu] += b - a;
      uint64_t s = StealNs(node, r.cpu, a, b);
      if (!s) continue;
      ns += s;
      by_cpu[r.cpu] += s;
      by_tid[tid] += s;
      first = std::min(first, a);
      last = std::max(last, b);
    }
  double share = static_cast<double>(ns) / observed;
  if (ns < min_delay || share < min_share) return out;
  Finding f;
  f.detector = "steal";
  f.kind = "steal";
  f.culprit = "the hypervisor (steal time)";
  f.culprit_kind = "hypervisor";
  for (const auto& [cpu, _] : by_cpu) f.cpus.push_back(cpu);
  for (const auto& [tid, _] : by_tid) f.focus_tids.push_back(tid);
  f.start = first;
  f.end = last;
  f.cost_ns = ns;
  f.cost_share = share;
  double run_share = static_cast<double>(ns) / static_cast<double>(std::max<uint64_t>(1, run_ns));
  f.title = fmt::format("the hypervisor took {} of {} while focus threads ran there ({} of their running time, {} "
                        "of their time): the guest saw them running",
                        FormatNs(ns), CpuPhrase(f.cpus), FormatShare(run_share), FormatShare(share));
  f.metrics = {{"steal_ns", static_cast<double>(ns)},
               {"running_ns", static_cast<double>(run_ns)},
               {"running_share", run_share},
               {"share", share}};
  for (const auto& [cpu, s] : by_cpu)
    f.evidence.push_back(fmt::format("CPU {}: {} stolen of {} focus-thread running time; {} stolen over the window",
                                     cpu, FormatNs(s), FormatNs(run_by_cpu[cpu]),
                                     FormatNs(StealNs(node, cpu, ctx.from, ctx.to))));
  out.push_back(std::move(f));
  return out;
}

}  // namespace gpunoise::analyze
