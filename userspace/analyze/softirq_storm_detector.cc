#include "analyze/softirq_storm_detector.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyze/attribution.h"
#include "analyze/format_util.h"
#include "analyze/interval_index.h"
#include "analyze/net_metadata.h"
#include "analyze/storm_core.h"
#include "common/strings.h"
#include "model/events.h"
#include "model/net_trace_event.h"

namespace gpunoise::analyze {
namespace {

struct Episode {
  uint64_t start = 0, end = 0;
  double peak_share = 0;
  uint64_t peak_start = 0;
  size_t windows = 0;
};

// Windows of `len` every `step` (at most `len`) across [from, to), plus one
// ending exactly at `to`; those where `index` is busy at least `share` of the
// window merge into episodes. Stretches with nothing in them, and stretches
// busy throughout, are crossed in one jump each, so the cost follows the
// intervals, not the span (a trace with timestamps far apart would otherwise
// have billions of windows). The episodes are those a window-by-window walk
// finds.
std::vector<Episode> FindEpisodes(const IntervalIndex& index, uint64_t from, uint64_t to,
                                  uint64_t len, uint64_t step, double share) {
  std::vector<Episode> out;
  if (index.empty() || to <= from) return out;
  len = std::min(len, to - from);
  step = std::clamp<uint64_t>(step, 1, std::max<uint64_t>(1, len));  // windows overlap or touch
  auto consider = [&](uint64_t ws, double s, uint64_t last_start, size_t windows) {
    if (!StormRule::Reaches(s, share)) return;
    if (!out.empty() && ws <= out.back().end) {
      Episode& e = out.back();
      e.end = last_start + len;
      e.windows += windows;
      if (s > e.peak_share) {
        e.peak_share = s;
        e.peak_start = ws;
      }
    } else {
      out.push_back({ws, last_start + len, s, ws, windows});
    }
  };
  const uint64_t last_k = (to - len - from) / step;  // the last grid window ends by `to`
  for (uint64_t k = 0; k <= last_k;) {
    const uint64_t ws = from + k * step;
    const uint64_t busy = index.Busy(ws, ws + len);
    if (!busy) {
      // Idle up to the first grid window that reaches the next interval.
      const uint64_t next = index.NextStart(ws + len);
      const uint64_t reach = next >= to ? last_k + 1 : (next - len - from) / step + 1;
      consider(ws, 0.0, from + (reach - 1) * step, reach - k);
      k = reach;
      continue;
    }
    const uint64_t covered = busy == len ? std::min(index.CoveredUntil(ws), to) : 0;
    if (covered >= ws + len) {
      // Every grid window inside the gapless stretch is busy throughout.
      const uint64_t more = std::min(last_k - k, (covered - len - ws) / step);
      consider(ws, 1.0, ws + more * step, more + 1);
      k += more + 1;
      continue;
    }
    consider(ws, static_cast<double>(busy) / static_cast<double>(len), ws, 1);
    ++k;
  }
  if (from + last_k * step + len < to) {
    const uint64_t ws = to - len;
    consider(ws, static_cast<double>(index.Busy(ws, to)) / static_cast<double>(len), ws, 1);
  }
  // A storm that dips under the threshold for less than a window is one
  // storm, not several.
  std::vector<Episode> merged;
  for (const Episode& e : out) {
    if (!merged.empty() && e.start <= merged.back().end + len) {
      Episode& m = merged.back();
      m.end = std::max(m.end, e.end);
      m.windows += e.windows;
      if (e.peak_share > m.peak_share) {
        m.peak_share = e.peak_share;
        m.peak_start = e.peak_start;
      }
    } else {
      merged.push_back(e);
    }
  }
  out = std::move(merged);
  return out;
}

bool IsKsoftirqdOf(const Timeline& t, int32_t tid, uint32_t cpu) {
  return t.ThreadName(tid) == fmt::format("ksoftirqd/{}", cpu);
}

struct Drivers {
  std::string device;
  int32_t queue = -1;
  int32_t irq = -1;
  std::vector<std::string> evidence;
};

// What drove softirq work on `cpu` during [a, b): NAPI polls and packets per
// device from the network events, and the hard IRQs that raised it.
Drivers FindDrivers(const AnalysisContext& ctx, uint32_t cpu, uint32_t vec, uint64_t a, uint64_t b) {
  const Timeline& t = ctx.t();
  Drivers d;
  struct DevStats {
    uint64_t polls = 0, full = 0, work = 0, packets = 0;
    std::map<int32_t, uint64_t> queues;
  };
  std::map<std::string, DevStats> devices;
  for (const NetRecord& e : t.net.events) {
    if (e.cpu != cpu || e.ts < a || e.ts >= b || !e.device) continue;
    auto kind = static_cast<model::NetTraceKind>(e.kind);
    DevStats& s = devices[std::string(t.net.Name(e.device))];
    if (kind == model::NetTraceKind::kNapiPoll) {
      ++s.polls;
      s.work += static_cast<uint64_t>(std::max<int64_t>(0, e.value));
      if (e.budget > 0 && e.value >= e.budget) ++s.full;
    } else if (kind == model::NetTraceKind::kRxPacket ||
               (kind == model::NetTraceKind::kTxPacket && vec == static_cast<uint32_t>(model::SoftirqVec::kNetTx))) {
      ++s.packets;
    } else {
      continue;
    }
    if (e.queue >= 0) s.queues[e.queue]++;
  }
  std::string best;
  uint64_t best_score = 0;
  for (const auto& [dev, s] : devices) {
    uint64_t score = s.work + s.packets;
    if (score > best_score) {
      best = dev;
      best_score = score;
    }
    if (s.polls)
      d.evidence.push_back(fmt::format("{}: {} NAPI polls on CPU {} ({} used the whole budget), {} packets processed",
                                       dev, s.polls, cpu, s.full, s.work));
    else if (s.packets)
      d.evidence.push_back(fmt::format("{}: {} packets on CPU {}", dev, s.packets, cpu));
  }
  if (!best.empty()) {
    d.device = best;
    const auto& qs = devices[best].queues;
    uint64_t top = 0;
    for (const auto& [q, n] : qs)
      if (n > top) {
        top = n;
        d.queue = q;
      }
  }
  int32_t napi_irq = -1;
  if (best.empty() && !ctx.net.counters.empty()) {
    // Without per-packet records: the per-CPU packet counters of the
    // network collectors, integrated over the episode.
    std::map<std::string, std::pair<double, double>> per_dev;  // napi, rx packets
    for (const NetCounter& c : ctx.net.counters) {
      if (c.cpu < 0 || static_cast<uint32_t>(c.cpu) != cpu) continue;
      if (c.metric == model::NetMetric::kCpuNapiPackets) per_dev[c.device].first += IntegrateRate(*c.samples, a, b);
      if (c.metric == model::NetMetric::kCpuRxPackets) per_dev[c.device].second += IntegrateRate(*c.samples, a, b);
    }
    double best_packets = 0;
    for (const auto& [dev, pk] : per_dev) {
      double packets = pk.first > 0 ? pk.first : pk.second;
      if (packets > best_packets) {
        best_packets = packets;
        best = dev;
      }
      if (packets >= 1)
        d.evidence.push_back(fmt::format("{}: {:.0f} packets through NAPI on CPU {} ({:.0f}/s; network counters)",
                                         dev, packets, cpu, packets * 1e9 / static_cast<double>(b - a)));
    }
    if (!best.empty()) {
      d.device = best;
      uint64_t top = 0;
      for (const NapiInstance& n : ctx.net.napi)
        if (n.device == best && n.cpu == cpu && n.packets > top) {
          top = n.packets;
          d.queue = n.queue;
          napi_irq = n.irq;
        }
    }
  }
  // NIC queue IRQs on this CPU in the episode (the device's first). Other
  // devices' IRQs raise no network softirqs, and veth has no IRQ at all:
  // its sender schedules the receiver's NAPI.
  std::map<int32_t, std::pair<uint64_t, uint64_t>> irqs;  // id -> count, ns
  const CpuTimeline& c = t.cpus[cpu];
  for (size_t i = FirstEndingAfter(c.hardirqs, a); i < c.hardirqs.size(); ++i) {
    const IntrSlice& s = c.hardirqs[i];
    if (s.start >= b) break;
    if (!ctx.nic_irqs.count(s.id)) continue;
    irqs[s.id].first++;
    irqs[s.id].second += Overlap(s.start, s.end, a, b);
  }
  int32_t top_irq = -1;
  uint64_t top_count = 0;
  for (const auto& [id, cn] : irqs) {
    bool matches = d.device.empty() || ctx.nic_irqs.at(id).device == d.device;
    uint64_t score = cn.first * (matches ? 1000 : 1);
    if (score > top_count) {
      top_count = score;
      top_irq = id;
    }
  }
  if (napi_irq >= 0) top_irq = napi_irq;
  if (top_irq >= 0) {
    d.irq = top_irq;
    if (irqs.count(top_irq))
      d.evidence.push_back(fmt::format("{} fired {} times on CPU {} ({})", t.IrqName(top_irq),
                                       irqs[top_irq].first, cpu, FormatNs(irqs[top_irq].second)));
    else
      d.evidence.push_back(fmt::format("its NAPI instance is served by {}", t.IrqName(top_irq)));
    if (ctx.nic_irqs.count(top_irq)) {
      const auto& q = ctx.nic_irqs.at(top_irq);
      if (d.device.empty()) d.device = q.device;
      if (d.queue < 0 && q.device == d.device) d.queue = q.queue;
    }
  }
  return d;
}

}  // namespace

std::vector<Finding> DetectSoftirqStorms(const AnalysisContext& ctx) {
  std::vector<Finding> out;
  const Timeline& t = ctx.t();
  // The rule is storm_core's; the report's windows slide by a fifth of
  // softirq.window over the trace's slices.
  const StormRule rule = StormRule::From(ctx.th());
  const uint64_t len = rule.window_ns;
  const uint64_t step = std::max<uint64_t>(1, len / 5);
  const double share = rule.share;
  const double ksoftirqd_share = rule.ksoftirqd_share;

  for (uint32_t cpu = 0; cpu < t.cpus.size(); ++cpu) {
    const CpuTimeline& c = t.cpus[cpu];
    if (!c.has_data()) continue;
    uint64_t from = std::max(ctx.from, c.first_ts), to = std::min(ctx.to, c.last_ts);
    if (to <= from) continue;
    std::map<uint32_t, IntervalIndex> by_vec;
    for (const IntrSlice& s : c.softirqs) by_vec[static_cast<uint32_t>(s.id)].Add(s.start, s.end);
    IntervalIndex ksoftirqd;
    std::map<uint32_t, uint64_t> ksoftirqd_vecs;  // softirq time inside ksoftirqd, by vector
    for (const RunSlice& r : c.runs)
      if (r.tid > 0 && IsKsoftirqdOf(t, r.tid, cpu)) ksoftirqd.Add(r.start, r.end);

    struct Candidate {
      Episode e;
      uint32_t vec;
      bool by_ksoftirqd;
    };
    std::vector<Candidate> candidates;
    for (const auto& [vec, index] : by_vec)
      for (const Episode& e : FindEpisodes(index, from, to, len, step, share)) candidates.push_back({e, vec, false});
    for (const Episode& e : FindEpisodes(ksoftirqd, from, to, len, step, ksoftirqd_share)) {
      // Which vector ksoftirqd was running: the softirqs inside its slices.
      ksoftirqd_vecs.clear();
      for (size_t i = FirstEndingAfter(c.softirqs, e.start); i < c.softirqs.size(); ++i) {
        const IntrSlice& s = c.softirqs[i];
        if (s.start >= e.end) break;
        if (s.tid > 0 && IsKsoftirqdOf(t, s.tid, cpu))
          ksoftirqd_vecs[static_cast<uint32_t>(s.id)] += Overlap(s.start, s.end, e.start, e.end);
      }
      uint64_t inside[model::kNumSoftirqVecs] = {};
      for (const auto& [v, ns] : ksoftirqd_vecs)
        if (v < model::kNumSoftirqVecs) inside[v] = ns;
      const uint32_t vec = KsoftirqdVector(inside);
      // Report it with the vector's own storm when they overlap.
      bool merged = false;
      for (auto& cand : candidates)
        if (!cand.by_ksoftirqd && cand.vec == vec && cand.e.start < e.end && e.start < cand.e.end) {
          cand.e.start = std::min(cand.e.start, e.start);
          cand.e.end = std::max(cand.e.end, e.end);
          merged = true;
        }
      if (!merged) candidates.push_back({e, vec, true});
    }

    for (Candidate& cand : candidates) {
      // Windows reach a window's length past the activity that flagged
      // them: trim the episode to the first and last slice inside it.
      Episode& e = cand.e;
      uint64_t first = UINT64_MAX, last = 0;
      auto trim = [&](uint64_t s, uint64_t end) {
        if (end <= e.start || s >= e.end) return;
        first = std::min(first, std::max(s, e.start));
        last = std::max(last, std::min(end, e.end));
      };
      if (cand.by_ksoftirqd) {
        for (const RunSlice& r : c.runs)
          if (r.tid > 0 && IsKsoftirqdOf(t, r.tid, cpu)) trim(r.start, r.end);
      } else {
        for (const IntrSlice& s : c.softirqs)
          if (static_cast<uint32_t>(s.id) == cand.vec) trim(s.start, s.end);
      }
      if (first < last) {
        e.start = first;
        e.end = last;
      }
      const uint32_t vec = cand.vec;
      std::string vec_name(model::SoftirqName(vec));
      uint64_t span = e.end - e.start;
      uint64_t vec_ns = by_vec.count(vec) ? by_vec[vec].Busy(e.start, e.end) : 0;
      uint64_t ksoftirqd_ns = ksoftirqd.Busy(e.start, e.end);

      Drivers d = FindDrivers(ctx, cpu, vec, e.start, e.end);
      Finding f = StormFinding(cpu, vec, cand.by_ksoftirqd, d.device, d.queue);
      f.start = e.start;
      f.end = e.end;
      f.culprit_irq = d.irq;

      // Focus threads it displaced: their waits on this CPU spent behind the
      // vector or ksoftirqd, and their runs here interrupted by it.
      uint64_t cost = 0;
      std::map<int32_t, uint64_t> displaced;
      for (const auto& [tid, act] : ctx.activities) {
        uint64_t ns = 0;
        for (const ThreadWait& w : act.waits) {
          if (w.cpu != cpu || w.end <= e.start || w.start >= e.end) continue;
          Breakdown bd;
          AttributeCpu(t, cpu, std::max(w.start, e.start), std::min(w.end, e.end), &bd);
          for (const auto& [who, v] : bd)
            if ((who.kind == Culprit::Kind::kSoftirq && static_cast<uint32_t>(who.id) == vec) ||
                (who.kind == Culprit::Kind::kTask && IsKsoftirqdOf(t, who.id, cpu)))
              ns += v;
        }
        for (const ThreadRun& r : act.runs) {
          if (r.cpu != cpu || r.end <= e.start || r.start >= e.end) continue;
          Breakdown bd;
          AttributeInterrupts(t, cpu, std::max(r.start, e.start), std::min(r.end, e.end), &bd);
          auto it = bd.find({Culprit::Kind::kSoftirq, static_cast<int32_t>(vec)});
          if (it != bd.end()) ns += it->second;
        }
        if (ns) {
          displaced[tid] = ns;
          cost += ns;
          f.focus_tids.push_back(tid);
        }
      }
      f.cost_ns = cost;
      f.cost_share = static_cast<double>(cost) / static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));
      double vec_share = static_cast<double>(vec_ns) / static_cast<double>(std::max<uint64_t>(1, span));
      if (cand.by_ksoftirqd)
        f.title = fmt::format("ksoftirqd/{} ran {} of CPU {} for {} (peak {} of a {} window), mostly {}", cpu,
                              FormatShare(static_cast<double>(ksoftirqd_ns) / static_cast<double>(span)), cpu,
                              FormatNs(span), FormatShare(e.peak_share), FormatNs(len), vec_name);
      else
        f.title = fmt::format("{} softirq storm on CPU {}: {} of the CPU for {} (peak {} of a {} window)", vec_name,
                              cpu, FormatShare(vec_share), FormatNs(span), FormatShare(e.peak_share), FormatNs(len));
      if (!d.device.empty()) f.title += fmt::format(", driven by {}", d.device);
      if (d.queue >= 0) f.title += fmt::format(" queue {}", d.queue);
      if (!f.focus_tids.empty())
        f.title += fmt::format("; displaced {} of focus-thread time", FormatNs(cost));

      f.metrics = {{"vector", static_cast<double>(vec)},
                   {"softirq_ns", static_cast<double>(vec_ns)},
                   {"share", vec_share},
                   {"peak_share", e.peak_share},
                   {"ksoftirqd_ns", static_cast<double>(ksoftirqd_ns)},
                   {"windows", static_cast<double>(e.windows)}};
      f.windows.push_back({e.peak_start, e.peak_start + len,
                           static_cast<uint64_t>(e.peak_share * static_cast<double>(len)),
                           fmt::format("peak: {} {} of CPU {}", vec_name, FormatShare(e.peak_share), cpu)});
      f.evidence.push_back(fmt::format("{} ran {} on CPU {} between {} and {}; ksoftirqd/{} ran {}", vec_name,
                                       FormatNs(vec_ns), cpu, FormatOffset(e.start, t.start_ts),
                                       FormatOffset(e.end, t.start_ts), cpu, FormatNs(ksoftirqd_ns)));
      if (const double untimed = c.UntimedDuring(e.start, e.end); untimed >= 1) {
        const uint32_t every = t.session ? t.session->netrx_sample_every : 0;
        f.metrics.push_back({"untimed_softirqs", untimed});
        f.evidence.push_back(fmt::format(
            "{:.0f} of the NET_RX softirqs here ran untimed (the recorder timed {} of a storm's): their time in the "
            "shares above is estimated from the timed ones",
            untimed, every ? fmt::format("1 in {}", every) : std::string("a sample")));
      }
      for (auto& line : d.evidence) f.evidence.push_back(std::move(line));
      if (d.device.empty())
        f.evidence.push_back("no network device data in this trace: record with the network collectors to name the device");
      for (const auto& [tid, ns] : displaced)
        f.evidence.push_back(fmt::format("displaced {} for {}", t.DescribeThread(tid), FormatNs(ns)));
      if (ctx.LossDuring(cpu, e.start, e.end))
        f.evidence.push_back(fmt::format("events were lost on CPU {} in this span", cpu));
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace gpunoise::analyze
