#include "analyze/throttling_detector.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyze/format_util.h"
#include "analyze/net_metadata.h"

namespace gpunoise::analyze {
namespace {

// Intervals (previous sample, sample] in which the counter rose. The first
// sample counts from the start of the data (the counter starts at zero).
std::vector<std::pair<uint64_t, uint64_t>> RisingIntervals(const std::vector<CounterSample>& s,
                                                           uint64_t data_start) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  double last = 0;
  uint64_t last_ts = data_start;
  for (const CounterSample& c : s) {
    if (c.value > last) {
      if (!out.empty() && out.back().second >= last_ts) out.back().second = c.ts;
      else out.push_back({last_ts, c.ts});
    }
    last = std::max(last, c.value);
    last_ts = c.ts;
  }
  return out;
}

}  // namespace

std::vector<ThrottledWait> ThrottledWaits(const AnalysisContext& ctx, const NodeMetadata& node) {
  std::vector<ThrottledWait> out;
  const Timeline& t = ctx.t();
  std::map<const QuotaCgroupData*, std::vector<std::pair<uint64_t, uint64_t>>> intervals;
  for (const auto& [tid, act] : ctx.activities) {
    const QuotaCgroupData* q = node.QuotaOf(t, tid);
    if (!q || !q->nr_throttled) continue;
    auto it = intervals.find(q);
    if (it == intervals.end()) it = intervals.emplace(q, RisingIntervals(*q->nr_throttled, t.start_ts)).first;
    const auto& rising = it->second;
    for (const ThreadWait& w : act.waits) {
      // A throttled wait ends in the period after the one whose quota ran
      // out: a wait overlapping a rising interval is the quota's, whole.
      auto r = std::lower_bound(rising.begin(), rising.end(), w.start,
                                [](const auto& iv, uint64_t ts) { return iv.second < ts; });
      if (r == rising.end() || r->first >= w.end) continue;
      uint64_t a = std::max(w.start, ctx.from), b = std::min(w.end, ctx.to);
      if (b > a) out.push_back({tid, w.cpu, a, b, q});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.start < y.start; });
  return out;
}

std::vector<Finding> DetectCpuThrottling(const AnalysisContext& ctx, const NodeMetadata& node) {
  std::vector<Finding> out;
  if (ctx.activities.empty()) return out;
  const Timeline& t = ctx.t();
  const uint64_t min_delay = ctx.th().GetNs("throttling.min_delay");
  const double min_share = ctx.th().Get("throttling.min_share");
  const double observed = static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));

  struct PerQuota {
    uint64_t ns = 0, waits = 0, first = UINT64_MAX, last = 0;
    std::map<int32_t, uint64_t> by_tid;
    std::map<uint32_t, uint64_t> by_cpu;
    std::vector<const ThrottledWait*> longest;
  };
  std::vector<ThrottledWait> waits = ThrottledWaits(ctx, node);
  std::map<const QuotaCgroupData*, PerQuota> per;
  for (const ThrottledWait& w : waits) {
    PerQuota& p = per[w.quota];
    uint64_t d = w.end - w.start;
    p.ns += d;
    ++p.waits;
    p.by_tid[w.tid] += d;
    p.by_cpu[w.cpu] += d;
    p.first = std::min(p.first, w.start);
    p.last = std::max(p.last, w.end);
    p.longest.push_back(&w);
  }
  for (auto& [q, p] : per) {
    double share = static_cast<double>(p.ns) / observed;
    if (p.ns < min_delay || share < min_share) continue;
    Finding f;
    f.detector = "cpu_throttling";
    f.kind = "cpu_throttling";
    double quota_cpus = q->period_us ? static_cast<double>(q->quota_us) / static_cast<double>(q->period_us) : 0;
    f.culprit = fmt::format("CPU quota of cgroup {} ({} per {})", q->path, FormatNs(q->quota_us * 1000),
                            FormatNs(q->period_us * 1000));
    f.culprit_kind = "cgroup";
    for (const auto& [cpu, _] : p.by_cpu) f.cpus.push_back(cpu);
    for (const auto& [tid, _] : p.by_tid) f.focus_tids.push_back(tid);
    f.start = p.first;
    f.end = p.last;
    f.cost_ns = p.ns;
    f.cost_share = share;
    double nr_throttled = q->nr_throttled ? Increase(*q->nr_throttled, ctx.from, ctx.to) : 0;
    double counter_ns = q->throttled_ns ? Increase(*q->throttled_ns, ctx.from, ctx.to) : 0;
    double periods = q->nr_periods ? Increase(*q->nr_periods, ctx.from, ctx.to) : 0;
    std::string victims = f.focus_tids.size() == 1 ? t.DescribeThread(f.focus_tids[0])
                                                   : fmt::format("{} focus threads", f.focus_tids.size());
    f.title = fmt::format("the {} kept {} runnable but off the CPU for {} ({} of their time); "
                          "the kernel throttled it in {:.0f} of {:.0f} periods",
                          f.culprit, victims, FormatNs(p.ns), FormatShare(share), nr_throttled, periods);
    f.metrics = {{"throttled_ns", static_cast<double>(p.ns)},
                 {"waits", static_cast<double>(p.waits)},
                 {"nr_throttled", nr_throttled},
                 {"nr_periods", periods},
                 {"cpu_stat_throttled_ns", counter_ns},
                 {"quota_us", static_cast<double>(q->quota_us)},
                 {"period_us", static_cast<double>(q->period_us)},
                 {"quota_cpus", quota_cpus},
                 {"cgroup_version", static_cast<double>(q->version)},
                 {"share", share}};
    for (const auto& [tid, ns] : p.by_tid) {
      const auto& act = ctx.activities.at(tid);
      f.evidence.push_back(fmt::format("{}: {} runnable in throttled periods, {} running, of {} observed",
                                       t.DescribeThread(tid), FormatNs(ns), FormatNs(act.run_ns()),
                                       FormatNs(act.observed_ns())));
    }
    f.evidence.push_back(fmt::format("cgroup {} cpu.stat over the window: nr_throttled +{:.0f}, throttled time +{} "
                                     "(cgroup v{}; the kernel's sum over its CPUs' run queues)",
                                     q->path, nr_throttled, FormatNs(static_cast<uint64_t>(counter_ns)), q->version));
    std::sort(p.longest.begin(), p.longest.end(),
              [](const auto* a, const auto* b) { return a->end - a->start > b->end - b->start; });
    for (size_t i = 0; i < p.longest.size() && i < 3; ++i) {
      const ThrottledWait& w = *p.longest[i];
      f.windows.push_back({w.start, w.end, w.end - w.start,
                           fmt::format("{} runnable off CPU {}", t.ThreadName(w.tid), w.cpu)});
    }
    for (uint32_t cpu : f.cpus)
      if (ctx.LossDuring(cpu, f.start, f.end))
        f.evidence.push_back(fmt::format("events were lost on CPU {} in this span: the figures are a lower bound", cpu));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpunoise::analyze
