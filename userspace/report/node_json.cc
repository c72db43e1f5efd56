#include "report/node_json.h"

#include "report/report_input.h"

namespace gpunoise::report_export {

void WriteNodeSummary(JsonWriter& w, const analyze::NodeSummary& n) {
  w.Key("node");
  w.BeginObject();
  w.Field("machine", n.machine);
  w.Field("hostname", n.hostname);
  w.Field("boot_id", n.boot_id);
  w.Field("has_realtime", n.has_realtime);
  w.Field("realtime_minus_boottime_ns", n.realtime_minus_boottime);
  w.Field("start_ns", n.start_ns);
  w.Field("end_ns", n.end_ns);
  w.Key("gpus");
  w.BeginArray();
  for (const auto& g : n.gpus) {
    w.BeginObject();
    w.Field("gpu", g.gpu);
    w.Field("pid", g.pid);
    w.Field("process", g.process);
    w.Field("rank", g.rank);
    w.Field("active_ns", g.active_ns);
    w.Field("busy_ns", g.busy_ns);
    w.Field("collective_ns", g.collective_ns);
    w.Field("compute_ns", g.compute_ns);
    w.Field("idle_ns", g.idle_ns);
    w.Field("host_wait_ns", g.host_wait_ns);
    w.Field("kernel_wait_ns", g.kernel_wait_ns);
    w.Field("other_idle_ns", g.other_idle_ns);
    w.Field("steps", g.steps);
    w.Field("step_ns", g.step_ns);
    w.Field("step_source", g.step_source);
    w.EndObject();
  }
  w.EndArray();
  // Compact rows: a node can make thousands of calls.
  w.Key("collective_columns");
  w.BeginArray();
  for (const char* c : {"comm", "seq", "op", "rank", "gpu", "start_ns", "end_ns", "bytes"}) w.String(c);
  w.EndArray();
  w.Key("collectives");
  w.BeginArray();
  for (const auto& c : n.collectives) {
    w.BeginArray();
    w.Uint(c.comm);
    w.Uint(c.seq);
    w.String(c.op);
    w.Int(c.rank);
    w.Uint(c.gpu);
    w.Uint(c.start);
    w.Uint(c.end);
    w.Uint(c.bytes);
    w.EndArray();
  }
  w.EndArray();
  w.Key("cpu_side");
  w.BeginObject();
  w.Field("focus_observed_ns", n.cpu.focus_observed_ns);
  w.Field("focus_wait_ns", n.cpu.focus_wait_ns);
  w.Field("focus_interrupted_ns", n.cpu.focus_interrupted_ns);
  w.Field("max_softirq_share", n.cpu.max_softirq_share);
  w.Field("max_softirq_cpu", n.cpu.max_softirq_cpu);
  w.Field("nic_drops", n.cpu.nic_drops);
  w.Field("tx_timeouts", n.cpu.tx_timeouts);
  w.Field("rdma_ports", n.cpu.rdma_ports);
  w.Field("rdma_errors", n.cpu.rdma_errors);
  w.Field("rdma_xmit_wait", n.cpu.rdma_xmit_wait);
  w.EndObject();
  w.EndObject();
}

analyze::Finding ParseFinding(const JsonValue& v) {
  analyze::Finding f;
  f.detector = v["detector"].String();
  f.kind = v["kind"].String();
  f.title = v["title"].String();
  f.culprit = v["culprit"]["name"].String();
  f.culprit_kind = v["culprit"]["kind"].String();
  f.culprit_tid = static_cast<int32_t>(v["culprit"]["tid"].Int());
  f.culprit_irq = static_cast<int32_t>(v["culprit"]["irq"].Int(-1));
  f.device = v["device"].String();
  f.queue = static_cast<int32_t>(v["queue"].Int(-1));
  for (const auto& c : v["cpus"].items()) f.cpus.push_back(static_cast<uint32_t>(c.Uint()));
  for (const auto& t : v["focus_tids"].items()) f.focus_tids.push_back(static_cast<int32_t>(t.Int()));
  f.start = v["start_ns"].Uint();
  f.end = v["end_ns"].Uint();
  f.cost_ns = v["cost_ns"].Uint();
  f.cost_share = v["cost_share"].Double();
  for (const auto& win : v["windows"].items())
    f.windows.push_back({win["start_ns"].Uint(), win["end_ns"].Uint(), win["cost_ns"].Uint(), win["note"].String()});
  for (const auto& [k, m] : v["metrics"].members()) f.metrics.emplace_back(k, m.Double());
  for (const auto& e : v["evidence"].items()) f.evidence.push_back(e.String());
  return f;
}

Result<analyze::NodeSummary> ParseNodeReport(const JsonValue& report, const std::string& path) {
  if (!report.is_object() || !report["schema"].String().starts_with("gpunoise.report/"))
    return MakeError("{} is not a gpunoise report (no \"schema\": \"{}\")", path, kJsonSchema);
  const JsonValue& node = report["node"];
  if (!node.is_object())
    return MakeError("{} has no \"node\" summary (written by `gpunoise report --json` of this version)", path);
  analyze::NodeSummary n;
  n.source = path;
  n.machine = node["machine"].String();
  n.hostname = node["hostname"].String();
  n.boot_id = node["boot_id"].String();
  n.has_realtime = node["has_realtime"].Bool();
  n.realtime_minus_boottime = node["realtime_minus_boottime_ns"].Int();
  n.start_ns = node["start_ns"].Uint();
  n.end_ns = node["end_ns"].Uint();
  for (const auto& g : node["gpus"].items()) {
    analyze::GpuSummary s;
    s.gpu = g["gpu"].String();
    s.pid = static_cast<int32_t>(g["pid"].Int());
    s.process = g["process"].String();
    s.rank = static_cast<int32_t>(g["rank"].Int(-1));
    s.active_ns = g["active_ns"].Uint();
    s.busy_ns = g["busy_ns"].Uint();
    s.collective_ns = g["collective_ns"].Uint();
    s.compute_ns = g["compute_ns"].Uint();
    s.idle_ns = g["idle_ns"].Uint();
    s.host_wait_ns = g["host_wait_ns"].Uint();
    s.kernel_wait_ns = g["kernel_wait_ns"].Uint();
    s.other_idle_ns = g["other_idle_ns"].Uint();
    s.steps = g["steps"].Uint();
    s.step_ns = g["step_ns"].Uint();
    s.step_source = g["step_source"].String();
    n.gpus.push_back(std::move(s));
  }
  for (const auto& row : node["collectives"].items()) {
    const auto& c = row.items();
    if (c.size() < 7) return MakeError("{}: a \"collectives\" row has {} columns, not 7", path, c.size());
    analyze::CollectiveCall call;
    call.comm = c[0].Uint();
    call.seq = static_cast<uint32_t>(c[1].Uint());
    call.op = c[2].String();
    call.rank = static_cast<int32_t>(c[3].Int(-1));
    call.gpu = static_cast<uint32_t>(c[4].Uint());
    call.start = c[5].Uint();
    call.end = c[6].Uint();
    if (c.size() > 7) call.bytes = c[7].Uint();  // summaries before typed NCCL payloads have 7
    if (call.gpu >= n.gpus.size())
      return MakeError("{}: a collective names GPU {} of {}", path, call.gpu, n.gpus.size());
    n.collectives.push_back(std::move(call));
  }
  const JsonValue& cpu = node["cpu_side"];
  n.cpu.focus_observed_ns = cpu["focus_observed_ns"].Uint();
  n.cpu.focus_wait_ns = cpu["focus_wait_ns"].Uint();
  n.cpu.focus_interrupted_ns = cpu["focus_interrupted_ns"].Uint();
  n.cpu.max_softirq_share = cpu["max_softirq_share"].Double();
  n.cpu.max_softirq_cpu = static_cast<uint32_t>(cpu["max_softirq_cpu"].Uint());
  n.cpu.nic_drops = cpu["nic_drops"].Uint();
  n.cpu.tx_timeouts = cpu["tx_timeouts"].Uint();
  n.cpu.rdma_ports = cpu["rdma_ports"].Uint();
  n.cpu.rdma_errors = cpu["rdma_errors"].Uint();
  n.cpu.rdma_xmit_wait = cpu["rdma_xmit_wait"].Uint();
  for (const auto& f : report["findings"].items()) n.findings.push_back(ParseFinding(f));
  return n;
}

}  // namespace gpunoise::report_export
