// cpu_frequency: focus threads running on a CPU whose frequency had dropped
// below a share of its maximum (power:cpu_frequency, the cpufreq driver's
// changes; cpuinfo_max_freq from sysfs, else the highest seen). A thread
// at half the frequency does about half the work in its running time, so
// each such stretch costs its length times the shortfall (1 - f / max).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyze/cpu_state_detectors.h"
#include "analyze/format_util.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectCpuFrequency(const AnalysisContext& ctx, const CpuStateData& d) {
  std::vector<Finding> out;
  if (ctx.activities.empty() || d.frequency.empty()) return out;
  const uint64_t min_delay = ctx.th().GetNs("cpu_frequency.min_delay");
  const double min_share = ctx.th().Get("cpu_frequency.min_share");
  const double ratio = ctx.th().Get("cpu_frequency.min_ratio");
  const double observed = static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));

  std::map<uint32_t, double> reference;  // kHz
  for (const auto& [cpu, samples] : d.frequency) {
    double ref = 0;
    if (auto it = d.max_khz.find(cpu); it != d.max_khz.end()) ref = it->second;
    else
      for (const CounterSample& s : samples) ref = std::max(ref, s.value);
    if (ref > 0) reference[cpu] = ref;
  }
  struct PerCpu {
    uint64_t reduced_ns = 0;
    double cost = 0;
    double lowest = 0;
  };
  std::map<uint32_t, PerCpu> by_cpu;
  std::map<int32_t, double> by_tid;
  double cost = 0;
  uint64_t reduced = 0, run_ns = 0, first = UINT64_MAX, last = 0;
  for (const auto& [tid, act] : ctx.activities)
    for (const ThreadRun& r : act.runs) {
      auto f = d.frequency.find(r.cpu);
      auto ref = reference.find(r.cpu);
      if (f == d.frequency.end() || ref == reference.end()) continue;
      const std::vector<CounterSample>& s = f->second;
      uint64_t a = std::max(r.start, ctx.from), b = std::min(r.end, ctx.to);
      if (b <= a) continue;
      run_ns += b - a;
      // The sample in force at `a`: the last at or before it (none before the first).
      auto it = std::upper_bound(s.begin(), s.end(), a, [](uint64_t v, const CounterSample& c) { return v < c.ts; });
      size_t i = it == s.begin() ? 0 : static_cast<size_t>(it - s.begin()) - 1;
      for (; i < s.size() && s[i].ts < b; ++i) {
        uint64_t from = std::max(a, s[i].ts);
        uint64_t to = i + 1 < s.size() ? std::min(b, s[i + 1].ts) : b;
        if (to <= from) continue;  // before the first sample: unknown
        if (s[i].value >= ratio * ref->second) continue;
        const uint64_t dt = to - from;
        const double lost = static_cast<double>(dt) * (1.0 - s[i].value / ref->second);
        PerCpu& p = by_cpu[r.cpu];
        p.reduced_ns += dt;
        p.cost += lost;
        p.lowest = p.lowest == 0 ? s[i].value : std::min(p.lowest, s[i].value);
        by_tid[tid] += lost;
        cost += lost;
        reduced += dt;
        first = std::min(first, from);
        last = std::max(last, to);
      }
    }
  const uint64_t cost_ns = static_cast<uint64_t>(cost);
  const double share = cost / observed;
  if (!reduced || cost_ns < min_delay || share < min_share) return out;
  Finding f;
  f.detector = "cpu_frequency";
  f.kind = "cpu_frequency";
  for (const auto& [cpu, _] : by_cpu) f.cpus.push_back(cpu);
  for (const auto& [tid, _] : by_tid) f.focus_tids.push_back(tid);
  f.culprit = "CPU frequency scaling (cpufreq)";
  f.culprit_kind = "hardware";
  f.start = first;
  f.end = last;
  f.cost_ns = cost_ns;
  f.cost_share = share;
  f.title = fmt::format("focus threads ran {} on {} below {} of the maximum frequency, worth {} of their running "
                        "time ({} of their time)",
                        FormatNs(reduced), CpuPhrase(f.cpus), FormatShare(ratio), FormatNs(cost_ns), FormatShare(share));
  f.metrics = {{"reduced_ns", static_cast<double>(reduced)},
               {"shortfall_ns", cost},
               {"running_ns", static_cast<double>(run_ns)},
               {"share", share}};
  for (const auto& [cpu, p] : by_cpu)
    f.evidence.push_back(fmt::format("CPU {}: {} of focus running time below {:.0f} MHz, lowest {:.0f} MHz of {:.0f} "
                                     "MHz ({}), worth {}",
                                     cpu, FormatNs(p.reduced_ns), ratio * reference[cpu] / 1000, p.lowest / 1000,
                                     reference[cpu] / 1000,
                                     d.max_khz.count(cpu) ? "cpuinfo_max_freq" : "the highest seen",
                                     FormatNs(static_cast<uint64_t>(p.cost))));
  for (const auto& [tid, ns] : by_tid)
    f.evidence.push_back(fmt::format("{}: worth {}", ctx.t().DescribeThread(tid), FormatNs(static_cast<uint64_t>(ns))));
  out.push_back(std::move(f));
  return out;
}

}  // namespace gpunoise::analyze
