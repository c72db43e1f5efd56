#include "analyze/analysis.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "analyze/analysis_context.h"
#include "analyze/cpu_state_detectors.h"
#include "analyze/gpu_gap_detector.h"
#include "analyze/interference_detector.h"
#include "analyze/nic_irqs.h"
#include "analyze/nic_health_detector.h"
#include "analyze/nic_metadata.h"
#include "analyze/nic_trouble_detector.h"
#include "analyze/kernel_log_findings.h"
#include "model/kernel_log.h"
#include "analyze/numa_locality_detector.h"
#include "analyze/placement_detector.h"
#include "analyze/kernel_work_detector.h"
#include "analyze/reclaim_detector.h"
#include "analyze/softirq_storm_detector.h"
#include "analyze/steal_detector.h"
#include "analyze/throttling_detector.h"
#include "analyze/wakeup_chain_detector.h"
#include "model/events.h"
#include "model/net_trace_event.h"

namespace gpunoise::analyze {

bool LossSummary::Counted(std::string_view collector, std::string_view event) const {
  for (const model::CollectorReport& c : collectors) {
    if (c.name != collector) continue;
    if (c.state != model::CollectorState::kActive && c.state != model::CollectorState::kDegraded) continue;
    // Missing events are named "category/event", with " (tp_btf)" or the
    // like when the attach failed.
    auto lacks = [&](std::string_view missing) {
      missing = missing.substr(0, missing.find(' '));
      return missing.substr(missing.rfind('/') + 1) == event;
    };
    if (event.empty() || std::none_of(c.missing_events.begin(), c.missing_events.end(), lacks)) return true;
  }
  // None ran it: where a recording lists this one, it could not start;
  // where it lists others only, its group was not asked for. Only a trace
  // that lists no collectors at all is taken as counted.
  return collectors.empty();
}

bool LossSummary::Listed(std::string_view collector) const {
  return collectors.empty() || std::any_of(collectors.begin(), collectors.end(),
                                           [&](const model::CollectorReport& c) { return c.name == collector; });
}

bool AnalysisContext::LossDuring(uint32_t cpu, uint64_t a, uint64_t b) const {
  if (cpu >= timeline->cpus.size()) return false;
  for (const LossSpan& l : timeline->cpus[cpu].losses)
    if (l.to >= a && (l.from == 0 || l.from < b)) return true;
  return false;
}

void RankFindings(std::vector<Finding>* findings) {
  auto severity = [](const Finding& f) {
    // Findings that cost nothing measurable (a TX timeout, a counter) rank
    // by kind: broken hardware before rates.
    if (f.kind == "tx_timeout" || f.kind == "kernel_health") return 3;
    // Kernel log findings rank by their message class: a lockup, an RCU
    // stall, a machine check or a NIC reset as high as a TX timeout; a
    // warning class (hung task, AER, page allocation failure) above rates.
    if (f.detector == "kernel_log") {
      for (const model::KernelLogPattern& p : model::KernelLogPatterns())
        if (p.name == f.kind) return p.severity == model::KernelLogSeverity::kSevere ? 3 : 2;
    }
    if (f.kind == "dql_stall") return 2;
    return 1;
  };
  std::stable_sort(findings->begin(), findings->end(), [&](const Finding& a, const Finding& b) {
    if (a.cost_ns != b.cost_ns) return a.cost_ns > b.cost_ns;
    if (severity(a) != severity(b)) return severity(a) > severity(b);
    return a.end - a.start > b.end - b.start;
  });
}

namespace {

std::vector<CpuShare> CpuShares(const AnalysisContext& ctx) {
  const Timeline& t = ctx.t();
  const std::map<uint32_t, uint64_t> reclaim_by_cpu = StallNsByCpu(FocusStalls(ctx));
  std::vector<CpuShare> out;
  for (uint32_t cpu = 0; cpu < t.cpus.size(); ++cpu) {
    const CpuTimeline& c = t.cpus[cpu];
    if (!c.has_data()) continue;
    CpuShare s;
    s.cpu = cpu;
    uint64_t from = std::max(ctx.from, c.first_ts), to = std::min(ctx.to, t.end_ts);
    if (to <= from) continue;
    Breakdown bd;
    AttributeCpu(t, cpu, from, to, &bd);
    for (const auto& [who, ns] : bd) {
      if (who.kind == Culprit::Kind::kUnknown) continue;
      s.observed_ns += ns;
      if (who.kind != Culprit::Kind::kIdle) s.busy_ns += ns;
      if (who.kind == Culprit::Kind::kHardirq) s.irq_ns += ns;
      if (who.kind == Culprit::Kind::kSoftirq) s.softirq_ns += ns;
      if (who.kind == Culprit::Kind::kTask && ctx.focus.count(who.id)) s.focus_ns += ns;
    }
    for (const RunSlice& r : c.runs)
      if (r.start >= from && r.start < to) ++s.switches;
    s.lost_spans = c.losses.size();
    s.steal_recorded = ctx.node.recorded;
    s.steal_ns = StealNs(ctx.node, cpu, from, to);
    for (const ThrottledWait& w : ThrottledWaits(ctx, ctx.node))
      if (w.cpu == cpu) s.throttled_ns += w.end - w.start;
    if (auto it = reclaim_by_cpu.find(cpu); it != reclaim_by_cpu.end()) s.reclaim_ns = it->second;
    out.push_back(s);
  }
  return out;
}

std::vector<RunQueueDelay> TopDelays(const AnalysisContext& ctx, size_t n) {
  const Timeline& t = ctx.t();
  std::vector<std::pair<int32_t, const ThreadWait*>> all;
  for (const auto& [tid, act] : ctx.activities)
    for (const ThreadWait& w : act.waits) all.push_back({tid, &w});
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    uint64_t da = a.second->end - a.second->start, db = b.second->end - b.second->start;
    return da != db ? da > db : a.second->start < b.second->start;
  });
  std::vector<RunQueueDelay> out;
  for (size_t i = 0; i < all.size() && i < n; ++i) {
    const ThreadWait& w = *all[i].second;
    RunQueueDelay d;
    d.tid = all[i].first;
    d.thread = t.DescribeThread(d.tid);
    d.cpu = w.cpu;
    d.start = w.start;
    d.end = w.end;
    d.after_preemption = w.after_preemption;
    Breakdown bd;
    AttributeCpu(t, w.cpu, w.start, w.end, &bd);
    for (const auto& [who, ns] : Ranked(bd)) {
      if (d.ran_instead.size() >= 3) break;
      d.ran_instead.push_back({DescribeCulprit(t, who), std::string(CulpritKindName(who.kind)), ns});
    }
    out.push_back(std::move(d));
  }
  return out;
}

// `packets_counting_ran`: the recording ran the net group, which counts
// every device's packets (its device statistics, or the netdev collector's
// counters). Without it a device known only from its IRQ names had its
// packets not counted, which is not 0.
std::vector<DeviceStats> Devices(const AnalysisContext& ctx, bool packets_counting_ran) {
  const Timeline& t = ctx.t();
  std::map<std::string, DeviceStats> devices;
  std::set<std::string> with_totals;
  for (const NetRecord& e : t.net.events) {
    if (e.ts < ctx.from || e.ts >= ctx.to) continue;
    auto kind = static_cast<model::NetTraceKind>(e.kind);
    std::string name(t.net.Name(e.device));
    // Retransmits belong to sockets, not devices; drops and timeouts without
    // a device still count somewhere.
    if (kind == model::NetTraceKind::kRetransmit) continue;
    if (name.empty() && kind != model::NetTraceKind::kDrop && kind != model::NetTraceKind::kTxTimeout &&
        kind != model::NetTraceKind::kDqlStall)
      continue;
    if (name.empty()) name = "(no device)";
    DeviceStats& d = devices[name];
    d.device = name;
    switch (kind) {
      case model::NetTraceKind::kRxPacket:
        ++d.rx_packets;
        d.rx_bytes += static_cast<uint64_t>(std::max<int64_t>(0, e.value));
        break;
      case model::NetTraceKind::kTxPacket:
        ++d.tx_packets;
        d.tx_bytes += static_cast<uint64_t>(std::max<int64_t>(0, e.value));
        break;
      case model::NetTraceKind::kNapiPoll:
        ++d.napi_polls;
        if (e.budget > 0 && e.value >= e.budget) ++d.full_budget_polls;
        break;
      case model::NetTraceKind::kDrop: {
        ++d.drops;
        std::string reason(t.net.Name(e.reason));
        d.drops_by_reason[reason.empty() ? "unknown" : reason]++;
        break;
      }
      case model::NetTraceKind::kTxTimeout: ++d.tx_timeouts; break;
      case model::NetTraceKind::kDqlStall: ++d.dql_stalls; break;
      case model::NetTraceKind::kRetransmit: break;
    }
  }
  // The network collectors' totals cover every packet, not just the ones
  // with a record of their own.
  for (const DeviceTotals& n : ctx.net.devices) {
    DeviceStats& d = devices[n.device];
    d.device = n.device;
    with_totals.insert(n.device);
    d.rx_packets = std::max(d.rx_packets, n.rx_packets);
    d.rx_bytes = std::max(d.rx_bytes, n.rx_bytes);
    d.tx_packets = std::max(d.tx_packets, n.tx_packets);
    d.tx_bytes = std::max(d.tx_bytes, n.tx_bytes);
    d.napi_polls = std::max(d.napi_polls, n.napi_polls);
    d.napi_packets = std::max(d.napi_packets, n.napi_packets);
    // Per-packet records count too (net-packets, which counts everywhere).
    d.packets_counted = n.packets_counted || d.rx_packets || d.tx_packets;
    d.full_budget_polls = std::max(d.full_budget_polls, n.napi_full_budget_polls);
    d.tx_timeouts = std::max(d.tx_timeouts, n.tx_timeouts);
    if (n.drops > d.drops) {
      d.drops = n.drops;
      d.drops_by_reason = n.drops_by_reason;
    }
  }
  const NicMetadata nic = ReadNicMetadata(t, ctx.net);
  for (const NicDevice& n : nic.devices) {
    DeviceStats& d = devices[n.device];
    d.device = n.device;
    d.nic_counters = true;
    d.driver = n.driver;
    d.nic_drops = n.drops();
    d.pause_frames = n.pause_frames();
    d.carrier_changes = n.carrier_changes;
    d.link_downs = n.link_down_events;
    for (const auto& [kind, v] : n.by_kind)
      if (v) d.nic_by_kind[std::string(model::NicCounterKindName(kind))] = v;
  }
  for (const auto& [irq, q] : ctx.nic_irqs) {
    DeviceStats& d = devices[q.device];
    d.device = q.device;
    d.irqs.push_back(irq);
  }
  for (auto& [name, d] : devices) {
    // Per-packet records count too (net-packets); a device that did nothing
    // while the net group ran has no totals and counted 0.
    if (!with_totals.contains(name)) d.packets_counted = packets_counting_ran || d.rx_packets || d.tx_packets;
    for (int32_t irq : d.irqs)
      for (const CpuTimeline& c : t.cpus)
        for (const IntrSlice& s : c.hardirqs)
          if (s.id == irq && s.start >= ctx.from && s.start < ctx.to) {
            ++d.irq_count;
            d.irq_ns += s.end - s.start;
          }
  }
  std::vector<DeviceStats> out;
  for (auto& [_, d] : devices) out.push_back(std::move(d));
  return out;
}

LossSummary Losses(const Timeline& t) {
  LossSummary l;
  std::map<uint32_t, CpuLossRow> rows;
  for (uint32_t cpu = 0; cpu < t.cpus.size(); ++cpu) {
    const CpuTimeline& c = t.cpus[cpu];
    if (!c.has_data() && c.losses.empty()) continue;
    CpuLossRow& r = rows[cpu];
    r.cpu = cpu;
    r.loss_spans = c.losses.size();
    r.unseen_switches = c.chain_breaks;
    l.slices_trimmed += c.slices_trimmed;
    for (const UntimedSpan& u : c.untimed) {
      l.netrx_untimed += u.count;
      l.netrx_untimed_placed += u.placed;
    }
  }
  std::vector<std::string> sources;
  if (t.session) {
    const model::SessionInfo& s = *t.session;
    sources.push_back("gpunoise session summary");
    l.switch_chain_checked = s.switch_chain_checked;
    l.softirqs_audited = s.softirqs_audited;
    l.unseen_from_session = true;
    for (const auto& c : s.cpus) {
      CpuLossRow& r = rows[c.cpu];
      r.cpu = c.cpu;
      r.lost = c.lost;
      r.lost_by_kind = c.lost_by_kind;
      r.decode_errors = c.decode_errors;
      r.unwritten = c.unwritten;
      r.unseen_switches = std::max(r.unseen_switches, c.unseen_switches);
      r.unreported_softirqs = c.unreported_softirqs;
      l.decode_errors += c.decode_errors;
      l.unwritten += c.unwritten;
    }
    l.collectors = s.collectors;
    l.bpf_recursion_misses = s.bpf_recursion_misses;
    l.programs = s.program_misses;
    l.map_losses = s.map_losses;
    l.records_outside_cpus = s.records_outside_cpus;
    l.netrx_sample_every = s.netrx_sample_every;
    // The session's count is the recorder's; the counters' may be fewer
    // where the analysis window or a damaged trace cut them.
    if (!l.netrx_untimed) l.netrx_untimed = s.netrx_untimed;
    l.end_reason = s.end_reason;
    l.recording_start = s.start_ts;
    l.unread_before_loss_ns = s.unread_before_loss_ns;
    l.unread_before_loss_from = s.unread_before_loss_from;
    l.first_ring_loss_seen = s.first_ring_loss_seen;
  } else if (t.ftrace_stats) {
    sources.push_back("ftrace_stats, END minus START per CPU");
    for (const auto& d : t.ftrace_stats->cpus) {
      CpuLossRow& r = rows[d.cpu];
      r.cpu = d.cpu;
      r.lost = d.lost();
      r.overwritten = d.overrun;
      r.dropped = d.dropped_events;
      r.commit_overrun = d.commit_overrun;
    }
    if (t.ftrace_stats->has_kprobe_stats && t.ftrace_stats->kprobe_misses > 0)
      l.kprobe_misses = static_cast<uint64_t>(t.ftrace_stats->kprobe_misses);
  }
  // With a task filter on, the recorder removed switches on purpose: a gap
  // in the chain is the filter, not the kernel, and is not counted.
  if (!l.switch_chain_checked)
    for (auto& [_, r] : rows) r.unseen_switches = 0;
  l.ftrace = t.ftrace_stats;
  l.service = t.service_stats;
  l.packet_loss = t.packet_loss;
  l.gpu = t.gpu_loss;
  if (t.service_stats) sources.push_back("trace_stats");
  if (t.packet_loss.packets) sources.push_back("previous_packet_dropped");
  if (t.gpu_loss && !t.session) sources.push_back("gpunoise GPU collection summary");
  for (auto& [_, r] : rows) {
    l.kernel_ring_full += r.lost;
    l.total_unseen_switches += r.unseen_switches;
    for (uint32_t vec = 0; vec < model::kNumSoftirqVecs; ++vec) {
      l.unreported_softirqs[vec] += r.unreported_softirqs[vec];
      l.total_unreported_softirqs += r.unreported_softirqs[vec];
    }
    l.cpus.push_back(r);
  }
  l.kernel_log.messages = t.kernel_log.size();
  l.kernel_log.kmsg_gaps = t.kernel_log_lost;
  for (const model::KernelLogEntry& e : t.kernel_log) {
    if (e.source == model::KernelLogSource::kBoth) ++l.kernel_log.with_caller;
    if (e.source == model::KernelLogSource::kKmsg) ++l.kernel_log.kmsg_only;
    if (e.source == model::KernelLogSource::kConsole) ++l.kernel_log.console_only;
  }
  for (const auto& c : l.collectors)
    if (c.name == "console" && c.state != model::CollectorState::kDisabled &&
        c.state != model::CollectorState::kNotRequested) {
      l.kernel_log.console = true;
      l.kernel_log.console_overwritten = c.lost;
    }
  // The same sum as model::TotalKernelAndUserLoss for a gpunoise session
  // (the number record printed); kretprobe misses only come from ftrace_stats.
  l.total_lost = l.kernel_ring_full + l.bpf_recursion_misses + l.decode_errors + l.unwritten +
                 l.records_outside_cpus + l.kprobe_misses;
  if (sources.empty()) {
    l.source = "none: the trace says nothing about lost events";
  } else {
    for (const auto& s : sources) l.source += (l.source.empty() ? "" : "; ") + s;
  }
  return l;
}

}  // namespace

Result<FocusSelection> BuildAnalysisContext(const Timeline& t, const AnalysisOptions& options,
                                            const Thresholds* thresholds, uint64_t from, uint64_t to,
                                            AnalysisContext* ctx) {
  ctx->timeline = &t;
  ctx->thresholds = thresholds;
  ctx->from = from;
  ctx->to = to;
  ctx->gpu = BuildGpuModel(t);
  ctx->net = ReadNetMetadata(t);
  ctx->nic_irqs = NicIrqs(t, ctx->net);
  ctx->node = ReadNodeMetadata(t);
  GN_ASSIGN_OR_RETURN(FocusSelection focus,
                      SelectFocus(t, ctx->gpu, *thresholds, options.focus, options.cgroups, from, to));
  ctx->focus = focus.tids;
  ctx->activities = BuildActivities(t, ctx->focus, from, to);
  for (const auto& [tid, act] : ctx->activities) ctx->focus_observed_ns += act.observed_ns();
  return focus;
}

Result<Analysis> Analyze(const Timeline& t, const AnalysisOptions& options) {
  Analysis a;
  a.thresholds = options.thresholds;
  a.trace_start = t.start_ts;
  a.trace_end = t.end_ts;
  if (!t.start_ts) return MakeError("the trace holds no scheduling or interrupt events to analyze");
  uint64_t from = t.start_ts, to = t.end_ts + 1;
  if (options.window_start) from = t.start_ts + *options.window_start;
  if (options.window_end) to = std::min(to, t.start_ts + *options.window_end);
  if (to <= from)
    return MakeError("--window selects nothing: the trace spans {:.3f} s", static_cast<double>(t.end_ts - t.start_ts) / 1e9);
  a.from = from;
  a.to = to;
  a.hostname = t.host.hostname;
  a.kernel = t.host.release;
  a.recorder = t.session ? "gpunoise " + t.session->tool_version : "not gpunoise (no session summary)";
  for (const auto& c : t.cpus) a.num_cpus += c.has_data() ? 1 : 0;


  AnalysisContext ctx;
  GN_ASSIGN_OR_RETURN(a.focus, BuildAnalysisContext(t, options, &a.thresholds, from, to, &ctx));
  a.has_network_data = !t.net.events.empty() || !ctx.net.empty();
  a.has_gpu_data = ctx.gpu.present();

  auto add = [&](std::vector<Finding> found) {
    for (auto& f : found) a.findings.push_back(std::move(f));
  };
  add(DetectInterference(ctx));
  add(DetectSoftirqStorms(ctx));
  add(DetectNicTrouble(ctx));
  add(DetectNicHealth(ctx));
  add(DetectGpuIdleGaps(ctx));
  add(DetectKernelLogTrouble(ctx, a.findings));  // after nic_trouble: its tx_timeout findings quote their lines
  add(DetectCpuThrottling(ctx, ctx.node));
  add(DetectPlacement(ctx, ctx.node));
  add(DetectWakeupChains(ctx));
  add(DetectSteal(ctx, ctx.node));
  add(DetectReclaim(ctx));
  add(DetectIpis(ctx));
  add(DetectKernelWork(ctx));
  {
    const CpuStateData cpustate = ReadCpuStateData(t);
    add(DetectIdleExit(ctx, cpustate));
    add(DetectCpuFrequency(ctx, cpustate));
    add(DetectNumaBalancing(ctx, cpustate));
    add(DetectSmis(ctx, cpustate));
    a.not_measurable = CpuStateNotMeasurable(cpustate);
    NumaMetadata numa = ReadNumaMetadata(t);
    if (std::string why = numa.NotMeasurableReason(); !why.empty())
      a.not_measurable.push_back({"numa_locality", std::move(why)});
    add(DetectNumaLocality(ctx, numa));
  }
  RankFindings(&a.findings);
  a.recorder_cost_ns = RecorderCost(MeasureInterference(ctx), t);

  for (int32_t tid : ctx.focus) {
    const ThreadActivity& act = ctx.activities[tid];
    FocusThreadSummary s;
    s.tid = tid;
    s.name = t.DescribeThread(tid);
    s.observed_ns = act.observed_ns();
    s.run_ns = act.run_ns();
    s.wait_ns = act.wait_ns();
    std::set<uint32_t> cpus;
    for (const ThreadRun& r : act.runs) {
      cpus.insert(r.cpu);
      Breakdown bd;
      AttributeInterrupts(t, r.cpu, r.start, r.end, &bd);
      for (const auto& [_, ns] : bd) s.interrupted_ns += ns;
    }
    s.cpus.assign(cpus.begin(), cpus.end());
    a.focus_threads.push_back(std::move(s));
  }
  a.cpus = CpuShares(ctx);
  a.top_delays = TopDelays(ctx, options.top_delays);
  a.loss = Losses(t);
  // The net group always lists the netdev collector, in whatever state.
  a.devices = Devices(ctx, a.loss.Listed("netdev"));
  return a;
}

}  // namespace gpunoise::analyze
