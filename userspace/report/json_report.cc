#include "report/json_report.h"

#include <algorithm>

#include "report/json_writer.h"
#include "report/loss_lines.h"
#include "report/node_json.h"
#include "model/session_info.h"

namespace gpunoise::report_export {
namespace {

double Share(uint64_t part, uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

template <typename T>
void Array(JsonWriter& w, std::string_view key, const std::vector<T>& values) {
  w.Key(key);
  w.BeginArray();
  for (const auto& v : values) {
    if constexpr (std::is_same_v<T, std::string>) w.String(v);
    else if constexpr (std::is_signed_v<T>) w.Int(v);
    else w.Uint(v);
  }
  w.EndArray();
}

void LostEvents(JsonWriter& w, const analyze::LossSummary& l) {
  w.Key("lost_events");
  w.BeginObject();
  w.Field("source", l.source);
  // total_lost = kernel_ring_full + bpf_recursion_misses + user_space (+
  // kretprobe_misses): for a gpunoise trace, the number record printed.
  w.Field("total_lost", l.total_lost);
  w.Field("kernel_ring_full", l.kernel_ring_full);
  w.Field("bpf_recursion_misses", l.bpf_recursion_misses);
  if (l.first_ring_loss_seen) {
    // Offsets from the recording's start (only where a ring lost records).
    auto offset = [&](uint64_t ts) { return ts - std::min(ts, l.recording_start); };
    w.Key("recorder_pace");
    w.BeginObject();
    w.Field("first_ring_loss_seen_ns", offset(l.first_ring_loss_seen));
    w.Field("unread_before_loss_ns", l.unread_before_loss_ns);
    w.Field("unread_before_loss_from_ns", offset(l.unread_before_loss_from));
    w.EndObject();
  }
  w.Key("programs");
  w.BeginArray();
  for (const auto& p : l.programs) {
    w.BeginObject();
    w.Field("collector", p.collector);
    w.Field("program", p.program);
    w.Field("missed", p.missed);
    w.EndObject();
  }
  w.EndArray();
  w.Key("user_space");
  w.BeginObject();
  w.Field("decode_errors", l.decode_errors);
  w.Field("unwritten", l.unwritten);
  w.Field("records_outside_cpus", l.records_outside_cpus);
  w.EndObject();
  w.Field("kretprobe_misses", l.kprobe_misses);
  // Not lost events: the aggregates undercount. Then the records per-CPU
  // logs lost and the callbacks left unpaired, outside total_lost.
  auto maps = [&](const char* key, model::MapLossKind kind, const char* count) {
    w.Key(key);
    w.BeginArray();
    for (const auto& m : l.map_losses) {
      if (m.kind != kind) continue;
      w.BeginObject();
      w.Field("collector", m.collector);
      w.Field("map", m.map);
      w.Field(count, m.count);
      w.EndObject();
    }
    w.EndArray();
  };
  maps("maps_full", model::MapLossKind::kFull, "full");
  maps("logs_overwritten", model::MapLossKind::kOverwritten, "lost");
  maps("callbacks_unpaired", model::MapLossKind::kUnpaired, "unpaired");
  w.Field("switch_chain_checked", l.switch_chain_checked);
  w.Field("unseen_switches", l.total_unseen_switches);
  // Per vector, the vectors with any; null when the recorder did not audit.
  auto unreported = [&](const model::SoftirqCounts& counts) {
    w.Key("unreported_softirqs");
    if (!l.softirqs_audited) {
      w.Null();
      return;
    }
    w.BeginObject();
    for (uint32_t vec = 0; vec < model::kNumSoftirqVecs; ++vec)
      if (counts[vec]) w.Field(model::SoftirqName(vec), counts[vec]);
    w.EndObject();
  };
  unreported(l.unreported_softirqs);
  w.Field("slices_trimmed", l.slices_trimmed);
  w.Key("netrx_sampling");
  w.BeginObject();
  w.Field("sample_every", uint64_t{l.netrx_sample_every});
  w.Field("untimed", l.netrx_untimed);
  w.Field("placed", l.netrx_untimed_placed);
  w.EndObject();
  if (!l.end_reason.empty()) w.Field("end_reason", l.end_reason);
  else {
    w.Key("end_reason");
    w.Null();
  }
  w.Key("cpus");
  w.BeginArray();
  for (const auto& c : l.cpus) {
    w.BeginObject();
    w.Field("cpu", c.cpu);
    w.Field("lost", c.lost);
    w.Key("lost_by_kind");
    w.BeginObject();
    for (const auto& [kind, n] : c.lost_by_kind) w.Field(kind, n);
    w.EndObject();
    w.Field("overwritten", c.overwritten);
    w.Field("dropped", c.dropped);
    w.Field("commit_overrun", c.commit_overrun);
    w.Field("decode_errors", c.decode_errors);
    w.Field("unwritten", c.unwritten);
    w.Field("unseen_switches", c.unseen_switches);
    unreported(c.unreported_softirqs);
    w.Field("loss_gaps", c.loss_spans);
    w.EndObject();
  }
  w.EndArray();
  w.Key("gpu");
  if (l.gpu) {
    w.BeginObject();
    w.Field("processes", l.gpu->processes);
    w.Field("fragments", l.gpu->fragments);
    w.Field("cupti_dropped_records", l.gpu->cupti_dropped_records);
    w.Field("chunks_not_written", l.gpu->chunks_not_written);
    w.Field("fragments_unreadable", l.gpu->fragments_unreadable);
    w.Field("fragments_truncated", l.gpu->fragments_truncated);
    w.Field("fragments_late", l.gpu->fragments_late);
    w.Field("pidns_processes_translated", l.gpu->processes_translated);
    w.Field("pidns_processes_unmapped", l.gpu->processes_unmapped);
    w.Field("pidns_threads_unmapped", l.gpu->threads_unmapped);
    w.Field("processes_not_captured", l.gpu->processes_not_captured);
    if (!l.gpu->error.empty()) w.Field("error", l.gpu->error);
    w.EndObject();
  } else {
    w.Null();
  }
  // Perfetto's own loss fields (traces from its recorder).
  w.Key("trace_service");
  if (l.service) {
    const model::TraceServiceStats& s = *l.service;
    w.BeginObject();
    w.Key("buffers");
    w.BeginArray();
    for (const auto& b : s.buffers) {
      w.BeginObject();
      w.Field("buffer", b.index);
      w.Field("buffer_size", b.buffer_size);
      w.Field("bytes_written", b.bytes_written);
      w.Field("bytes_overwritten", b.bytes_overwritten);
      w.Field("chunks_written", b.chunks_written);
      w.Field("chunks_overwritten", b.chunks_overwritten);
      w.Field("chunks_discarded", b.chunks_discarded);
      w.Field("chunks_rewritten", b.chunks_rewritten);
      w.Field("patches_failed", b.patches_failed);
      w.Field("abi_violations", b.abi_violations);
      w.Field("trace_writer_packet_loss", b.trace_writer_packet_loss);
      w.Field("readaheads_failed", b.readaheads_failed);
      w.EndObject();
    }
    w.EndArray();
    w.Field("chunks_discarded", s.chunks_discarded);
    w.Field("patches_discarded", s.patches_discarded);
    w.Field("invalid_packets", s.invalid_packets);
    w.Field("flushes_requested", s.flushes_requested);
    w.Field("flushes_succeeded", s.flushes_succeeded);
    w.Field("flushes_failed", s.flushes_failed);
    w.Field("final_flush_failed", s.final_flush_failed);
    w.Field("filter_errors", s.filter_errors);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("packet_loss");
  w.BeginObject();
  w.Field("packets", l.packet_loss.packets);
  w.Field("sequences", l.packet_loss.sequences);
  w.EndObject();
  w.Key("ftrace");
  if (l.ftrace) {
    w.BeginObject();
    Array(w, "failed_events", l.ftrace->failed_events);
    Array(w, "unknown_events", l.ftrace->unknown_events);
    w.Field("atrace_errors", l.ftrace->atrace_errors);
    w.Key("parse_errors");
    w.BeginArray();
    for (uint32_t c : l.ftrace->parse_errors) w.String(FtraceParseStatusName(c));
    w.EndArray();
    w.Field("preserve_ftrace_buffer", l.ftrace->preserve_ftrace_buffer);
    w.EndObject();
  } else {
    w.Null();
  }
  // The header's loss lines, as the text report words them.
  Array(w, "summary", LossLines(l));
  // The kernel log's two halves (never part of total_lost).
  w.Key("kernel_log");
  w.BeginObject();
  w.Field("messages", l.kernel_log.messages);
  w.Field("with_caller", l.kernel_log.with_caller);
  w.Field("kmsg_gaps", l.kernel_log.kmsg_gaps);
  w.Field("kmsg_only", l.kernel_log.kmsg_only);
  w.Field("console_only", l.kernel_log.console_only);
  w.Field("console_overwritten", l.kernel_log.console_overwritten);
  w.Field("console", l.kernel_log.console);
  w.EndObject();
  w.Key("collectors");
  w.BeginArray();
  for (const auto& c : l.collectors) {
    w.BeginObject();
    w.Field("name", c.name);
    w.Field("state", model::CollectorStateName(c.state));
    if (!c.reason.empty()) w.Field("reason", c.reason);
    w.Field("events", c.events);
    w.Field("lost", c.lost);
    Array(w, "missing_events", c.missing_events);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace

void WriteFinding(JsonWriter& w, const analyze::Finding& f, int rank) {
  w.BeginObject();
  w.Field("rank", rank);
  w.Field("detector", f.detector);
  w.Field("kind", f.kind);
  w.Field("title", f.title);
  w.Key("culprit");
  w.BeginObject();
  w.Field("name", f.culprit);
  w.Field("kind", f.culprit_kind);
  if (f.culprit_tid) w.Field("tid", f.culprit_tid);
  if (f.culprit_irq >= 0) w.Field("irq", f.culprit_irq);
  w.EndObject();
  if (!f.device.empty()) w.Field("device", f.device);
  if (f.queue >= 0) w.Field("queue", f.queue);
  Array(w, "cpus", f.cpus);
  Array(w, "focus_tids", f.focus_tids);
  w.Field("start_ns", f.start);
  w.Field("end_ns", f.end);
  w.Field("cost_ns", f.cost_ns);
  w.Field("cost_share", f.cost_share);
  w.Key("windows");
  w.BeginArray();
  for (const auto& win : f.windows) {
    w.BeginObject();
    w.Field("start_ns", win.start);
    w.Field("end_ns", win.end);
    w.Field("cost_ns", win.cost_ns);
    w.Field("note", win.note);
    w.EndObject();
  }
  w.EndArray();
  w.Key("metrics");
  w.BeginObject();
  for (const auto& [k, v] : f.metrics) w.Field(k, v);
  w.EndObject();
  Array(w, "evidence", f.evidence);
  w.EndObject();
}

std::string FormatJsonReport(const ReportInput& in) {
  const analyze::Analysis& a = *in.analysis;
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Field("schema", kJsonSchema);

  w.Key("trace");
  w.BeginObject();
  w.Field("path", in.trace_path);
  w.Field("hostname", a.hostname);
  w.Field("kernel", a.kernel);
  w.Field("recorder", a.recorder);
  w.Field("cpus", a.num_cpus);
  w.Field("start_ns", a.trace_start);
  w.Field("end_ns", a.trace_end);
  w.Field("duration_ns", a.trace_end - a.trace_start);
  w.Field("has_network_data", a.has_network_data);
  w.Field("has_gpu_data", a.has_gpu_data);
  if (in.read) {
    w.Key("read");
    w.BeginObject();
    w.Field("bytes", in.read->bytes);
    w.Field("packets", in.read->packets);
    w.Field("kernel_events", in.read->events);
    w.Field("network_events", in.read->net_events);
    w.Field("track_events", in.read->track_events);
    w.Field("unused_ftrace_events", in.read->unknown_ftrace_events);
    w.Field("malformed_packets", in.read->malformed_packets);
    w.Field("truncated", in.read->truncated);
    Array(w, "problems", in.read->problems);
    w.EndObject();
  }
  w.EndObject();

  w.Key("window");
  w.BeginObject();
  w.Field("start_ns", a.from);
  w.Field("end_ns", std::min(a.to, a.trace_end));
  w.Field("start_offset_ns", a.from - a.trace_start);
  w.Field("end_offset_ns", std::min(a.to, a.trace_end) - a.trace_start);
  w.EndObject();

  w.Key("focus");
  w.BeginObject();
  w.Field("how", a.focus.how);
  w.Field("recorder_cost_ns", a.recorder_cost_ns);
  w.Key("threads");
  w.BeginArray();
  for (const auto& f : a.focus_threads) {
    w.BeginObject();
    w.Field("tid", f.tid);
    w.Field("name", f.name);
    w.Field("observed_ns", f.observed_ns);
    w.Field("run_ns", f.run_ns);
    w.Field("wait_ns", f.wait_ns);
    w.Field("interrupted_ns", f.interrupted_ns);
    Array(w, "cpus", f.cpus);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  w.Key("findings");
  w.BeginArray();
  int rank = 0;
  for (const auto& f : a.findings) WriteFinding(w, f, ++rank);
  w.EndArray();

  w.Key("not_measurable");
  w.BeginArray();
  for (const auto& n : a.not_measurable) {
    w.BeginObject();
    w.Field("kind", n.kind);
    w.Field("reason", n.reason);
    w.EndObject();
  }
  w.EndArray();

  w.Key("cpus");
  w.BeginArray();
  for (const auto& c : a.cpus) {
    w.BeginObject();
    w.Field("cpu", c.cpu);
    w.Field("observed_ns", c.observed_ns);
    w.Field("busy_ns", c.busy_ns);
    w.Field("irq_ns", c.irq_ns);
    w.Field("softirq_ns", c.softirq_ns);
    w.Field("focus_ns", c.focus_ns);
    w.Field("busy_share", Share(c.busy_ns, c.observed_ns));
    w.Field("irq_share", Share(c.irq_ns, c.observed_ns));
    w.Field("softirq_share", Share(c.softirq_ns, c.observed_ns));
    w.Field("focus_share", Share(c.focus_ns, c.observed_ns));
    w.Field("switches", c.switches);
    w.Field("loss_gaps", c.lost_spans);
    w.Field("steal_recorded", c.steal_recorded);
    w.Field("steal_ns", c.steal_ns);
    w.Field("throttled_ns", c.throttled_ns);
    w.Field("reclaim_ns", c.reclaim_ns);
    w.EndObject();
  }
  w.EndArray();

  w.Key("top_run_queue_delays");
  w.BeginArray();
  for (const auto& d : a.top_delays) {
    w.BeginObject();
    w.Field("tid", d.tid);
    w.Field("thread", d.thread);
    w.Field("cpu", d.cpu);
    w.Field("start_ns", d.start);
    w.Field("duration_ns", d.end - d.start);
    w.Field("after_preemption", d.after_preemption);
    w.Key("ran_instead");
    w.BeginArray();
    for (const auto& r : d.ran_instead) {
      w.BeginObject();
      w.Field("who", r.who);
      w.Field("kind", r.kind);
      w.Field("ns", r.ns);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();

  w.Key("network_devices");
  w.BeginArray();
  const bool napi = a.loss.Counted("napi"), drops = a.loss.Counted("drops"), netdev = a.loss.Counted("netdev");
  // Linux 6.10+: older kernels run the napi collector without it.
  const bool dql = a.loss.Counted("napi", "dql_stall_detected");
  // null: the collector that counts it did not run (lost_events.collectors
  // says why), so the figure is unknown, not 0.
  auto counted = [&](std::string_view key, bool ran, uint64_t v) {
    w.Key(key);
    ran ? w.Uint(v) : w.Null();
  };
  for (const auto& d : a.devices) {
    w.BeginObject();
    w.Field("device", d.device);
    // Another namespace's device without per-packet programs: unknown.
    counted("rx_packets", d.packets_counted, d.rx_packets);
    counted("rx_bytes", d.packets_counted, d.rx_bytes);
    counted("tx_packets", d.packets_counted, d.tx_packets);
    counted("tx_bytes", d.packets_counted, d.tx_bytes);
    w.Field("packets_counted", d.packets_counted);
    counted("napi_polls", napi, d.napi_polls);
    counted("napi_packets", napi, d.napi_packets);
    counted("full_budget_polls", napi, d.full_budget_polls);
    counted("drops", drops, d.drops);
    w.Key("drops_by_reason");
    if (drops) {
      w.BeginObject();
      for (const auto& [reason, n] : d.drops_by_reason) w.Field(reason, n);
      w.EndObject();
    } else {
      w.Null();
    }
    counted("tx_timeouts", netdev, d.tx_timeouts);
    counted("dql_stalls", dql, d.dql_stalls);
    if (d.nic_counters) {
      w.Key("nic");
      w.BeginObject();
      w.Field("driver", d.driver);
      w.Field("drops", d.nic_drops);
      w.Field("pause_frames", d.pause_frames);
      w.Field("carrier_changes", static_cast<uint64_t>(d.carrier_changes));
      w.Field("link_down_events", static_cast<uint64_t>(d.link_downs));
      w.Key("by_kind");
      w.BeginObject();
      for (const auto& [kind, n] : d.nic_by_kind) w.Field(kind, n);
      w.EndObject();
      w.EndObject();
    }
    Array(w, "irqs", d.irqs);
    w.Field("irq_count", d.irq_count);
    w.Field("irq_ns", d.irq_ns);
    w.EndObject();
  }
  w.EndArray();

  LostEvents(w, a.loss);


  // What the cross-node report reads back from each node (docs/fleet.md).
  if (in.node) WriteNodeSummary(w, *in.node);

  w.Key("thresholds");
  w.BeginObject();
  for (const auto& [name, value] : a.thresholds.values()) w.Field(name, value);
  w.EndObject();

  w.EndObject();
  return out;
}

}  // namespace gpunoise::report_export
