#include "report/text_report.h"

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <utility>

#include "analyze/format_util.h"
#include "report/loss_lines.h"
#include "model/events.h"

namespace gpunoise::report_export {
namespace {

using analyze::FormatNs;
using analyze::FormatOffset;
using analyze::FormatShare;
using analyze::JoinCpus;

double Share(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

void Header(const ReportInput& in, std::string& out) {
  const analyze::Analysis& a = *in.analysis;
  out += fmt::format("gpunoise report: {}\n", in.trace_path);
  std::string host = a.hostname.empty() ? "host unknown" : "host " + a.hostname;
  if (!a.kernel.empty()) host += ", kernel " + a.kernel;
  out += fmt::format("  {}, {} CPUs with data, recorded by {}\n", host, a.num_cpus, a.recorder);
  out += fmt::format("  window {} .. {} ({}) of a {} trace\n", FormatOffset(a.from, a.trace_start),
                     FormatOffset(std::min(a.to, a.trace_end), a.trace_start),
                     FormatNs(std::min(a.to, a.trace_end) - a.from), FormatNs(a.trace_end - a.trace_start));
  // Loss first (DESIGN.md decision 3): a reader must know before reading on.
  const analyze::LossSummary& l = a.loss;
  for (const auto& line : LossLines(l)) out += "  " + line + "\n";
  for (const auto& c : l.collectors)
    if (c.state != model::CollectorState::kActive)
      out += fmt::format("  collector {} was {}{}\n", c.name, model::CollectorStateName(c.state),
                         c.reason.empty() ? "" : ": " + c.reason);
  if (in.read) {
    for (const auto& p : in.read->problems) out += fmt::format("  DAMAGED TRACE: {}\n", p);
    if (in.read->truncated) out += "  the report covers only what could be read before the damage (--partial)\n";
  }
  out += fmt::format("  focus ({}):", a.focus.how);
  if (a.focus_threads.empty()) out += " none\n";
  else out += "\n";
  for (const auto& f : a.focus_threads)
    out += fmt::format("    {}: ran {}, waited {}, interrupted {} of {} observed, CPU {}\n", f.name,
                       FormatNs(f.run_ns), FormatNs(f.wait_ns), FormatNs(f.interrupted_ns),
                       FormatNs(f.observed_ns), f.cpus.empty() ? "-" : JoinCpus(f.cpus));
  if (a.recorder_cost_ns)
    out += fmt::format("  the recorder (gpunoise) itself took {} of focus-thread time; findings leave it out\n",
                       FormatNs(a.recorder_cost_ns));
  if (!a.has_network_data) out += "  no network events in this trace\n";
  if (!a.has_gpu_data) out += "  no GPU data in this trace\n";
}

void Findings(const ReportInput& in, std::string& out) {
  const analyze::Analysis& a = *in.analysis;
  if (a.findings.empty()) {
    out += "\nNo findings: nothing crossed its threshold (thresholds at the end).\n";
    return;
  }
  out += fmt::format("\nFINDINGS ({}, by the time they cost the focus threads)\n", a.findings.size());
  int rank = 0;
  for (const auto& f : a.findings) {
    out += fmt::format("\n{:2}. [{}] {}\n", ++rank, f.detector, f.title);
    out += fmt::format("    when:  {} .. {}", FormatOffset(f.start, a.trace_start), FormatOffset(f.end, a.trace_start));
    if (!f.windows.empty()) {
      out += "; worst:";
      for (size_t i = 0; i < f.windows.size(); ++i)
        out += fmt::format("{} {} ({})", i ? "," : "", FormatOffset(f.windows[i].start, a.trace_start), f.windows[i].note);
    }
    out += "\n";
    std::string where;
    if (!f.cpus.empty()) where += analyze::CpuPhrase(f.cpus);
    if (!f.device.empty()) where += fmt::format("{}device {}", where.empty() ? "" : ", ", f.device);
    if (f.queue >= 0) where += fmt::format(" queue {}", f.queue);
    if (f.culprit_irq >= 0) where += fmt::format("{}irq {}", where.empty() ? "" : ", ", f.culprit_irq);
    if (!where.empty()) out += "    where: " + where + "\n";
    out += fmt::format("    who:   {}\n", f.culprit);
    if (f.cost_ns) out += fmt::format("    cost:  {} of focus-thread time ({})\n", FormatNs(f.cost_ns), FormatShare(f.cost_share));
    for (const auto& e : f.evidence) out += "      - " + e + "\n";
  }
}

// Kinds this trace cannot show: a quiet report must not read as "checked".
void NotMeasurableLines(const ReportInput& in, std::string& out) {
  const analyze::Analysis& a = *in.analysis;
  if (a.not_measurable.empty()) return;
  out += "\nNOT MEASURABLE ON THIS NODE\n";
  for (const auto& n : a.not_measurable) out += fmt::format("  {}: {}\n", n.kind, n.reason);
}

void CpuTable(const ReportInput& in, std::string& out) {
  const analyze::Analysis& a = *in.analysis;
  out += "\nCPUS (share of the time each CPU has data for)\n";
  // steal: the hypervisor's share; throttled: focus-thread waits in this
  // CPU's queue that a CPU quota explains (share of observed time).
  out += fmt::format("  {:>4} {:>10} {:>7} {:>7} {:>8} {:>7} {:>9} {:>5} {:>6} {:>9} {:>7}\n", "cpu", "observed", "busy",
                     "irq", "softirq", "focus", "switches", "gaps", "steal", "throttled", "reclaim");
  for (const auto& c : a.cpus)
    out += fmt::format("  {:>4} {:>10} {:>7} {:>7} {:>8} {:>7} {:>9} {:>5} {:>6} {:>9} {:>7}\n", c.cpu, FormatNs(c.observed_ns),
                       FormatShare(Share(c.busy_ns, c.observed_ns)), FormatShare(Share(c.irq_ns, c.observed_ns)),
                       FormatShare(Share(c.softirq_ns, c.observed_ns)), FormatShare(Share(c.focus_ns, c.observed_ns)),
                       c.switches, c.lost_spans, c.steal_recorded ? FormatShare(Share(c.steal_ns, c.observed_ns)) : "-",
                       FormatShare(Share(c.throttled_ns, c.observed_ns)), FormatShare(Share(c.reclaim_ns, c.observed_ns)));
}

void DelayTable(const ReportInput& in, std::string& out) {
  const analyze::Analysis& a = *in.analysis;
  out += "\nTOP RUN-QUEUE DELAYS OF FOCUS THREADS\n";
  if (a.top_delays.empty()) {
    out += "  none\n";
    return;
  }
  for (const auto& d : a.top_delays) {
    std::string who;
    for (const auto& r : d.ran_instead) who += fmt::format("{}{} {}", who.empty() ? "" : "; ", r.who, FormatNs(r.ns));
    out += fmt::format("  {:>9} at {} on CPU {} ({}): {}\n    ran instead: {}\n", FormatNs(d.end - d.start),
                       FormatOffset(d.start, a.trace_start), d.cpu, d.after_preemption ? "preempted" : "after wakeup",
                       d.thread, who.empty() ? "-" : who);
  }
}

void DeviceTable(const ReportInput& in, std::string& out) {
  const analyze::Analysis& a = *in.analysis;
  out += "\nNETWORK DEVICES\n";
  if (a.devices.empty()) {
    out += "  no network data\n";
    return;
  }
  // "nic drops", "pause", "link": the NIC's own counters and carrier
  // changes ("-" where the recording did not read them).
  out += fmt::format("  {:<16} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>8} {:>5}\n", "device",
                     "rx pkts", "tx pkts", "napi", "full", "drops", "timeouts", "irqs", "irq time", "nic drops",
                     "pause", "link");
  auto nic = [](const analyze::DeviceStats& d, uint64_t v) { return d.nic_counters ? std::to_string(v) : "-"; };
  // "-": not counted (another network namespace than the recorder's, read
  // from device statistics; or the net group did not run), which is not zero.
  auto packets = [](const analyze::DeviceStats& d, uint64_t v) { return d.packets_counted ? std::to_string(v) : "-"; };
  // "-" also where the collector that counts a column could not start (its
  // tracepoint missing on that kernel): unknown, not zero.
  const bool napi = a.loss.Counted("napi"), drops = a.loss.Counted("drops"), netdev = a.loss.Counted("netdev");
  auto counted = [](bool ran, uint64_t v) { return ran ? std::to_string(v) : "-"; };
  const bool net_group = a.loss.Listed("netdev");
  for (const auto& d : a.devices) {
    out += fmt::format("  {:<16} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>8} {:>5}\n", d.device,
                       packets(d, d.rx_packets), packets(d, d.tx_packets), counted(napi, d.napi_polls),
                       counted(napi, d.full_budget_polls), counted(drops, d.drops), counted(netdev, d.tx_timeouts),
                       d.irq_count, FormatNs(d.irq_ns), nic(d, d.nic_drops), nic(d, d.pause_frames),
                       nic(d, d.carrier_changes));
    // Without the net group the footer below says why for every device.
    if (!d.packets_counted && net_group)
      out += fmt::format("    rx and tx not counted: device statistics cover the recorder's own network namespace "
                         "(record --net-packet-counters on counts every device){}\n",
                         napi ? fmt::format("; its NAPI polls processed {} packets", d.napi_packets) : "");
    for (const auto& [reason, n] : d.drops_by_reason) out += fmt::format("    drops {}: {}\n", reason, n);
    for (const auto& [kind, n] : d.nic_by_kind) out += fmt::format("    nic {}: {}\n", kind, n);
  }
  struct CountedColumns {
    std::string_view collector;
    std::string_view columns;
  };
  for (const CountedColumns& counted_by : std::array<CountedColumns, 3>{
           {{"napi", "napi, full"},
            {"drops", "drops"},
            {"netdev", !net_group && std::any_of(a.devices.begin(), a.devices.end(),
                                                 [](const analyze::DeviceStats& d) { return !d.packets_counted; })
                           ? "rx, tx, timeouts"
                           : "timeouts"}}}) {
    // A struct, not a structured binding: clang before 16 cannot capture a binding in a lambda.
    if (a.loss.Counted(counted_by.collector)) continue;
    auto c = std::find_if(a.loss.collectors.begin(), a.loss.collectors.end(),
                          [&](const model::CollectorReport& r) { return r.name == counted_by.collector; });
    if (c == a.loss.collectors.end())
      out += fmt::format("  {}: not counted (the {} collector did not run: record --events without net)\n",
                         counted_by.columns, counted_by.collector);
    else
      out += fmt::format("  {}: not counted (the {} collector: {})\n", counted_by.columns, c->name,
                         c->reason.empty() ? model::CollectorStateName(c->state) : std::string_view(c->reason));
  }
}

void LossTable(const ReportInput& in, std::string& out) {
  const analyze::Analysis& a = *in.analysis;
  const analyze::LossSummary& l = a.loss;
  out += fmt::format("\nLOST EVENTS (source: {})\n", l.source);
  out += fmt::format("  {:>4} {:>10} {:>16} {:>10} {:>10} {:>10}\n", "cpu", "lost", "unseen switches", "gaps",
                     "undecoded", "unwritten");
  for (const auto& c : l.cpus)
    out += fmt::format("  {:>4} {:>10} {:>16} {:>10} {:>10} {:>10}\n", c.cpu, c.lost, c.unseen_switches,
                       c.loss_spans, c.decode_errors, c.unwritten);
  if (l.bpf_recursion_misses) out += fmt::format("  eBPF program runs the kernel skipped: {}\n", l.bpf_recursion_misses);
  if (l.softirqs_audited && l.total_unreported_softirqs) {
    std::string where;
    for (const auto& c : l.cpus)
      for (uint32_t vec = 0; vec < model::kNumSoftirqVecs; ++vec)
        if (c.unreported_softirqs[vec])
          where += fmt::format("{}CPU {} {} {}", where.empty() ? "" : ", ", c.cpu, model::SoftirqName(vec),
                               c.unreported_softirqs[vec]);
    out += fmt::format("  softirqs the kernel never delivered to its tracepoint: {}\n", where);
  }
  for (const auto& c : l.collectors) {
    out += fmt::format("  collector {}: {}, {} events, {} lost", c.name, model::CollectorStateName(c.state), c.events, c.lost);
    if (!c.missing_events.empty()) {
      out += "; missing:";
      for (const auto& m : c.missing_events) out += " " + m;
    }
    out += "\n";
  }
  if (in.read) {
    out += fmt::format("  read {} bytes, {} packets, {} kernel events, {} network events, {} track events", in.read->bytes,
                       in.read->packets, in.read->events, in.read->net_events, in.read->track_events);
    if (in.read->unknown_ftrace_events) out += fmt::format(", {} ftrace events not used", in.read->unknown_ftrace_events);
    out += "\n";
  }
}

void ThresholdTable(const ReportInput& in, std::string& out) {
  const analyze::Analysis& a = *in.analysis;
  out += "\nTHRESHOLDS (set with --threshold NAME=VALUE; * = changed)\n";
  analyze::Thresholds defaults;
  for (const auto& s : analyze::AllThresholds()) {
    bool changed = a.thresholds.Get(s.name) != defaults.Get(s.name);
    out += fmt::format("  {}{:<26} {}\n", changed ? "*" : " ", s.name, a.thresholds.Format(s.name));
  }
}

}  // namespace

std::string FormatTextReport(const ReportInput& in) {
  std::string out;
  Header(in, out);
  Findings(in, out);
  NotMeasurableLines(in, out);
  CpuTable(in, out);
  DelayTable(in, out);
  DeviceTable(in, out);
  LossTable(in, out);
  ThresholdTable(in, out);
  return out;
}

}  // namespace gpunoise::report_export
