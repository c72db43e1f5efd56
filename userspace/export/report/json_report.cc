#include "export/report/json_report.h"

#include "export/report/json_writer.h"
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

void Finding(JsonWriter& w, const analyze::Finding& f, int rank) {
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

}  // namespace

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
  for (const auto& f : a.findings) Finding(w, f, ++rank);
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
  for (const auto& d : a.devices) {
    w.BeginObject();
    w.Field("device", d.device);
    w.Field("rx_packets", d.rx_packets);
    w.Field("rx_bytes", d.rx_bytes);
    w.Field("tx_packets", d.tx_packets);
    w.Field("tx_bytes", d.tx_bytes);
    w.Field("napi_polls", d.napi_polls);
    w.Field("full_budget_polls", d.full_budget_polls);
    w.Field("drops", d.drops);
    w.Key("drops_by_reason");
    w.BeginObject();
    for (const auto& [reason, n] : d.drops_by_reason) w.Field(reason, n);
    w.EndObject();
    w.Field("tx_timeouts", d.tx_timeouts);
    w.Field("dql_stalls", d.dql_stalls);
    Array(w, "irqs", d.irqs);
    w.Field("irq_count", d.irq_count);
    w.Field("irq_ns", d.irq_ns);
    w.EndObject();
  }
  w.EndArray();

  const analyze::LossSummary& l = a.loss;
  w.Key("lost_events");
  w.BeginObject();
  w.Field("source", l.source);
  w.Field("total_lost", l.total_lost);
  w.Field("unseen_switches", l.total_unseen_switches);
  w.Field("bpf_recursion_misses", l.bpf_recursion_misses);
  w.Key("cpus");
  w.BeginArray();
  for (const auto& c : l.cpus) {
    w.BeginObject();
    w.Field("cpu", c.cpu);
    w.Field("lost", c.lost);
    w.Field("unseen_switches", c.unseen_switches);
    w.Field("loss_gaps", c.loss_spans);
    w.EndObject();
  }
  w.EndArray();
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

  w.Key("thresholds");
  w.BeginObject();
  for (const auto& [name, value] : a.thresholds.values()) w.Field(name, value);
  w.EndObject();

  w.EndObject();
  return out;
}

}  // namespace gpunoise::report_export
