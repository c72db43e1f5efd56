#include "analyze/interference_detector.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "analyze/format_util.h"
#include "analyze/interference_core.h"

namespace gpunoise::analyze {

namespace {

// The noisy-neighbour case: a culprit task in a pod none of the focus
// threads is in, and whether its cgroup's CPU quota throttled it over the
// recording (the recorder's cpu.stat at its start and end). Its own finding
// (cpu_throttling) is about the focus; this is one sentence about the culprit.
void NoteNeighbourPod(const Timeline& t, int32_t culprit, Finding* f) {
  const model::ProcessIdentity* id = t.IdentityOf(culprit);
  if (!id || id->container.pod_uid.empty()) return;
  for (int32_t tid : f->focus_tids) {
    const model::ProcessIdentity* fid = t.IdentityOf(tid);
    if (fid && fid->container.pod_uid == id->container.pod_uid) return;  // the focus's own pod
  }
  const model::ContainerIdentity& c = id->container;
  std::string pod = c.pod_name.empty() ? "pod-uid " + c.pod_uid
                    : c.pod_namespace.empty() ? "pod " + c.pod_name
                                              : "pod " + c.pod_namespace + "/" + c.pod_name;
  f->metrics.push_back({"culprit_other_pod", 1});
  std::string note = "the culprit runs in another pod (" + pod + ")";
  const model::CgroupThrottling& d = id->cpu_stat_delta;
  if (d.valid) {
    f->metrics.push_back({"culprit_cgroup_throttled_periods", static_cast<double>(d.nr_throttled)});
    f->metrics.push_back({"culprit_cgroup_throttled_ns", static_cast<double>(d.throttled_ns)});
    note += d.nr_throttled
                ? fmt::format(", whose cgroup was CPU-throttled in {} of {} periods ({}) over the recording",
                              d.nr_throttled, d.nr_periods, FormatNs(d.throttled_ns))
                : fmt::format(", whose cgroup was not CPU-throttled over the recording ({} periods)", d.nr_periods);
  }
  f->title += "; " + note;
  f->evidence.push_back(note + (d.valid ? " (" + d.file + ")" : ""));
}

}  // namespace


bool IsRecorderThread(const Timeline& t, int32_t tid) {
  return t.ThreadName(tid) == "gpunoise" || t.ProcessName(t.TgidOf(tid)) == "gpunoise";
}

uint64_t RecorderCost(const InterferenceTotals& totals, const Timeline& t) {
  uint64_t ns = 0;
  for (const auto& [who, c] : totals.culprits)
    if (who.kind == Culprit::Kind::kTask && IsRecorderThread(t, who.id)) ns += c.total();
  return ns;
}

InterferenceTotals MeasureInterference(const AnalysisContext& ctx) {
  InterferenceTotals totals;
  const Timeline& t = ctx.t();
  const uint64_t window = std::max<uint64_t>(1, ctx.th().GetNs("interference.window"));
  auto culprit = [&](const Culprit& who) -> InterferenceTotals::PerCulprit& {
    return totals.culprits.try_emplace(who, ctx.from, window).first->second;
  };
  // Where and when a piece of a focus thread's time went to the culprit.
  auto charge = [](InterferenceTotals::PerCulprit& c, int32_t focus_tid, uint32_t cpu, const AttributedPiece& p) {
    c.by_focus_tid[focus_tid] += p.end - p.start;
    c.by_cpu[cpu] += p.end - p.start;
    c.by_window.Add(p.start, p.end);
    c.first = std::min(c.first, p.start);
    c.last = std::max(c.last, p.end);
  };
  std::vector<AttributedPiece> pieces;
  for (const auto& [tid, act] : ctx.activities) {
    for (const ThreadWait& w : act.waits) {
      pieces.clear();
      AttributeCpuPieces(t, w.cpu, w.start, w.end, &pieces);
      std::set<Culprit> seen;
      for (const AttributedPiece& p : pieces) {
        const Culprit& who = p.culprit;
        // A wait attributed to the thread itself means it ran elsewhere
        // meanwhile (a migration the trace did not show): not a culprit.
        if (who.kind == Culprit::Kind::kTask && who.id == tid) continue;
        auto& c = culprit(who);
        charge(c, tid, w.cpu, p);
        c.wait_ns += p.end - p.start;
        totals.wait_ns += p.end - p.start;
        if (seen.insert(who).second) ++c.waits;
      }
    }
    for (const ThreadRun& r : act.runs) {
      pieces.clear();
      InterruptPieces(t, r.cpu, r.start, r.end, &pieces);
      for (const AttributedPiece& p : pieces) {
        auto& c = culprit(p.culprit);
        charge(c, tid, r.cpu, p);
        c.interrupt_ns += p.end - p.start;
        totals.interrupt_ns += p.end - p.start;
      }
    }
  }
  return totals;
}

std::vector<Finding> DetectInterference(const AnalysisContext& ctx) {
  std::vector<Finding> out;
  if (ctx.activities.empty()) return out;
  const Timeline& t = ctx.t();
  InterferenceTotals totals = MeasureInterference(ctx);
  const InterferenceRule rule = InterferenceRule::From(ctx.th());
  const uint64_t window = std::max<uint64_t>(1, ctx.th().GetNs("interference.window"));

  for (const auto& [who, c] : totals.culprits) {
    // Idle CPUs and missing data explain a wait but name no culprit.
    if (who.kind == Culprit::Kind::kIdle || who.kind == Culprit::Kind::kUnknown) continue;
    // The recorder's own cost is reported once, in the report's header,
    // not as the node's noise.
    if (who.kind == Culprit::Kind::kTask && IsRecorderThread(t, who.id)) continue;
    uint64_t cost = c.total();
    double share = InterferenceShare(cost, ctx.focus_observed_ns);
    if (!rule.Reached(cost, ctx.focus_observed_ns)) continue;

    Finding f;
    f.detector = "interference";
    f.kind = std::string(InterferenceKind(c.wait_ns, c.interrupt_ns));
    f.culprit = DescribeCulprit(t, who);
    f.culprit_kind = std::string(CulpritKindName(who.kind));
    if (who.kind == Culprit::Kind::kTask) f.culprit_tid = who.id;
    if (who.kind == Culprit::Kind::kHardirq) f.culprit_irq = who.id;
    if (who.kind == Culprit::Kind::kHardirq && ctx.nic_irqs.count(who.id)) {
      f.device = ctx.nic_irqs.at(who.id).device;
      f.queue = ctx.nic_irqs.at(who.id).queue;
    }
    for (const auto& [cpu, _] : c.by_cpu) f.cpus.push_back(cpu);
    for (const auto& [tid, _] : c.by_focus_tid) f.focus_tids.push_back(tid);
    f.cost_ns = cost;
    f.cost_share = share;

    std::string victims = f.focus_tids.size() == 1
                              ? t.DescribeThread(f.focus_tids[0])
                              : fmt::format("{} focus threads", f.focus_tids.size());
    // Name both parts when each is a real share of the cost.
    bool waits = c.wait_ns * 10 >= cost, interrupts = c.interrupt_ns * 10 >= cost;
    if (waits && interrupts)
      f.title = fmt::format("{} interrupted {} for {} and kept them waiting {} in the run queue of {}", f.culprit,
                            victims, FormatNs(c.interrupt_ns), FormatNs(c.wait_ns), CpuPhrase(f.cpus));
    else if (waits)
      f.title = fmt::format("{} kept {} waiting {} in the run queue of {}", f.culprit, victims,
                            FormatNs(c.wait_ns), CpuPhrase(f.cpus));
    else
      f.title = fmt::format("{} interrupted {} for {} on {}", f.culprit, victims,
                            FormatNs(c.interrupt_ns), CpuPhrase(f.cpus));
    f.title += fmt::format(" ({} of their time)", FormatShare(share));

    f.metrics = {{"wait_ns", static_cast<double>(c.wait_ns)},
                 {"interrupt_ns", static_cast<double>(c.interrupt_ns)},
                 {"waits", static_cast<double>(c.waits)},
                 {"share", share}};
    if (who.kind == Culprit::Kind::kTask) NoteNeighbourPod(t, who.id, &f);
    for (const auto& [tid, ns] : c.by_focus_tid) {
      const auto& act = ctx.activities.at(tid);
      f.evidence.push_back(fmt::format("{}: {} of its {} observed ({} waiting behind it, {} running)",
                                       t.DescribeThread(tid), FormatNs(ns), FormatNs(act.observed_ns()),
                                       FormatNs(act.wait_ns()), FormatNs(act.run_ns())));
    }
    if (c.waits)
      f.evidence.push_back(fmt::format("{} run-queue waits of focus threads had it on the CPU instead", c.waits));

    // Worst windows.
    const auto windows = c.by_window.Worst(3);
    f.start = c.first;
    f.end = c.last;
    for (size_t i = 0; i < windows.size(); ++i) {
      uint64_t ws = ctx.from + windows[i].first * window;
      uint64_t we = std::min(ctx.to, ws + window);
      f.windows.push_back({ws, we, windows[i].second,
                           fmt::format("{} of {} ({})", FormatNs(windows[i].second), FormatNs(we - ws),
                                       FormatShare(static_cast<double>(windows[i].second) /
                                                   static_cast<double>(std::max<uint64_t>(1, we - ws))))});
    }
    for (uint32_t cpu : f.cpus)
      if (ctx.LossDuring(cpu, f.start, f.end))
        f.evidence.push_back(fmt::format("events were lost on CPU {} in this span: the figures are a lower bound", cpu));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpunoise::analyze
