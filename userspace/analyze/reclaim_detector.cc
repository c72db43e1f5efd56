#include "analyze/reclaim_detector.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyze/format_util.h"

namespace gpunoise::analyze {
namespace {

constexpr std::string_view kCategory = "gpunoise.memstall";  // export/perfetto/node_tracks.h

std::string KindId(std::string_view name) {
  std::string id(name);
  std::replace(id.begin(), id.end(), ' ', '_');
  return id;  // "memcg_reclaim"
}

// Union length of [start, end) spans of one thread, sorted by start.
uint64_t UnionNs(std::vector<std::pair<uint64_t, uint64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  uint64_t total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& [s, e] : spans) {
    if (open && s <= cur_e) {
      cur_e = std::max(cur_e, e);
      continue;
    }
    if (open) total += cur_e - cur_s;
    cur_s = s, cur_e = e, open = true;
  }
  if (open) total += cur_e - cur_s;
  return total;
}

}  // namespace

std::vector<FocusStall> FocusStalls(const AnalysisContext& ctx) {
  std::vector<FocusStall> out;
  const Timeline& t = ctx.t();
  for (const TrackSlice& s : t.tracks.slices) {
    if (t.tracks.String(s.category) != kCategory) continue;
    auto track = t.tracks.tracks.find(s.track);
    if (track == t.tracks.tracks.end()) continue;
    int32_t tid = track->second.tid;
    auto act = ctx.activities.find(tid);
    if (act == ctx.activities.end()) continue;
    uint64_t a = std::max(s.start, ctx.from), b = std::min(s.end, ctx.to);
    if (b <= a) continue;
    uint32_t cpu = 0;
    for (const ThreadRun& r : act->second.runs) {
      if (r.start > s.start) break;
      cpu = r.cpu;  // the run it began in, else the last before it
    }
    out.push_back({tid, cpu, a, b, std::string(t.tracks.String(s.name))});
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.start < y.start; });
  return out;
}

std::map<uint32_t, uint64_t> StallNsByCpu(const std::vector<FocusStall>& stalls) {
  std::map<std::pair<int32_t, uint32_t>, std::vector<std::pair<uint64_t, uint64_t>>> spans;
  for (const FocusStall& s : stalls) spans[{s.tid, s.cpu}].push_back({s.start, s.end});
  std::map<uint32_t, uint64_t> out;
  for (auto& [key, v] : spans) out[key.second] += UnionNs(std::move(v));
  return out;
}

std::vector<Finding> DetectReclaim(const AnalysisContext& ctx) {
  std::vector<Finding> out;
  if (ctx.activities.empty()) return out;
  const Timeline& t = ctx.t();
  const uint64_t min_delay = ctx.th().GetNs("reclaim.min_delay");
  const double min_share = ctx.th().Get("reclaim.min_share");
  const double observed = static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));
  std::vector<FocusStall> stalls = FocusStalls(ctx);

  struct PerKind {
    std::map<int32_t, std::vector<std::pair<uint64_t, uint64_t>>> by_tid;
    std::map<uint32_t, uint64_t> by_cpu;
    uint64_t count = 0, sum = 0, longest = 0, first = UINT64_MAX, last = 0;
    std::vector<FindingWindow> worst;
  };
  std::map<std::string, PerKind> per;
  for (const FocusStall& s : stalls) {
    PerKind& p = per[s.kind];
    uint64_t d = s.end - s.start;
    p.by_tid[s.tid].push_back({s.start, s.end});
    p.by_cpu[s.cpu] += d;
    ++p.count;
    p.sum += d;
    p.longest = std::max(p.longest, d);
    p.first = std::min(p.first, s.start);
    p.last = std::max(p.last, s.end);
    p.worst.push_back({s.start, s.end, d, fmt::format("{} in {}", t.ThreadName(s.tid), s.kind)});
  }
  for (auto& [kind, p] : per) {
    uint64_t cost = 0;
    std::map<int32_t, uint64_t> tid_cost;
    for (auto& [tid, v] : p.by_tid) cost += tid_cost[tid] = UnionNs(v);
    double share = static_cast<double>(cost) / observed;
    if (cost < min_delay || share < min_share) continue;
    Finding f;
    // A writer paused for its dirty pages is writeback, not reclaim.
    bool writeback = kind == "balance dirty pages";
    f.detector = writeback ? "writeback_stall" : "reclaim";
    f.kind = KindId(kind);
    f.culprit = writeback ? "dirty-page throttling (balance_dirty_pages)" : "kernel " + kind;
    f.culprit_kind = "kernel";
    for (const auto& [cpu, _] : p.by_cpu) f.cpus.push_back(cpu);
    for (const auto& [tid, _] : p.by_tid) f.focus_tids.push_back(tid);
    f.start = p.first;
    f.end = p.last;
    f.cost_ns = cost;
    f.cost_share = share;
    std::string victims = f.focus_tids.size() == 1 ? t.DescribeThread(f.focus_tids[0])
                                                   : fmt::format("{} focus threads", f.focus_tids.size());
    f.title = fmt::format("{} stalled {} in {} ({} stalls, longest {}; {} of their time)", victims, FormatNs(cost), kind,
                          p.count, FormatNs(p.longest), FormatShare(share));
    f.metrics = {{"stall_ns", static_cast<double>(cost)},
                 {"stalls", static_cast<double>(p.count)},
                 {"sum_ns", static_cast<double>(p.sum)},
                 {"longest_ns", static_cast<double>(p.longest)},
                 {"share", share}};
    for (const auto& [tid, ns] : tid_cost)
      f.evidence.push_back(fmt::format("{}: {} in {} of its {} observed", t.DescribeThread(tid), FormatNs(ns), kind,
                                       FormatNs(ctx.activities.at(tid).observed_ns())));
    f.evidence.push_back(fmt::format("from the vmscan/compaction tracepoints' begin and end (memstall collector)"));
    std::sort(p.worst.begin(), p.worst.end(), [](const auto& x, const auto& y) { return x.cost_ns > y.cost_ns; });
    for (size_t i = 0; i < p.worst.size() && i < 3; ++i) f.windows.push_back(p.worst[i]);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpunoise::analyze
