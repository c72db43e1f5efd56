#include "report/fleet_report.h"

#include <fmt/format.h>

#include "analyze/format_util.h"
#include "report/json_report.h"
#include "report/json_writer.h"

namespace gpunoise::report_export {
namespace {

using analyze::FormatNs;
using analyze::FormatShare;

std::string SignedNs(int64_t ns) {
  return (ns < 0 ? "-" : "+") + FormatNs(static_cast<uint64_t>(ns < 0 ? -ns : ns));
}

std::string AlignmentText(const analyze::MachineAlignment& a) {
  if (a.method == "collectives")
    return fmt::format("collectives: REALTIME {} (spread {}, {} instances)", SignedNs(a.realtime_correction_ns),
                       FormatNs(static_cast<uint64_t>(a.spread_ns)), a.instances);
  return a.method + (a.note.empty() ? "" : " (" + a.note + ")");
}

}  // namespace

std::string FormatFleetText(const analyze::FleetAnalysis& fa) {
  std::string out;
  out += fmt::format("gpunoise fleet report: {} machines, {} collective instances matched across machines, "
                     "{} steps (median)\n",
                     fa.nodes.size(), fa.matched_instances, fa.steps);
  for (const auto& row : fa.machines) {
    const auto& n = fa.nodes[row.machine];
    out += fmt::format("  {}: {}; {}\n", n.machine, n.source.empty() ? "summary" : n.source,
                       AlignmentText(row.alignment));
  }
  for (const auto& note : fa.notes) out += "  " + note + "\n";

  if (fa.findings.empty()) {
    out += "\nNo straggler: no machine's collectives start consistently later than its peers'.\n";
  } else {
    out += fmt::format("\nFINDINGS ({})\n", fa.findings.size());
    int rank = 0;
    for (const auto& f : fa.findings) {
      out += fmt::format("\n {}. [{}] {}\n", ++rank, f.detector, f.title);
      out += fmt::format("    who:   {}\n", f.culprit);
      if (f.kind == "cpu_outlier")
        out += fmt::format("    cost:  {} of its focus threads' time ({}), by its costliest own finding\n",
                           FormatNs(f.cost_ns), FormatShare(f.cost_share));
      else
        out += fmt::format("    cost:  {} per step ({} of a step), {} over {} steps\n",
                           FormatNs(static_cast<uint64_t>(f.Metric("cost_per_step_ns"))), FormatShare(f.cost_share),
                           FormatNs(f.cost_ns), static_cast<uint64_t>(f.Metric("steps")));
      for (const auto& e : f.evidence) out += "      - " + e + "\n";
    }
  }

  bool gpu = false;
  for (const auto& n : fa.nodes) gpu |= !n.gpus.empty();
  out += "\nNODES (most costly to the job first; per step, averaged over the machine's GPUs)\n";
  if (!gpu) out += "  no GPU data on any machine: see CPU SIDE\n";
  if (gpu) out += fmt::format("  {:<16} {:>6} {:>10} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "machine",
                     "steps", "step", "busy", "host-wait", "krn-wait", "other", "nccl", "compute", "lag",
                     "cost/step");
  for (const auto& r : fa.machines) {
    if (!gpu) break;
    const auto& n = fa.nodes[r.machine];
    out += fmt::format("  {:<16} {:>6} {:>10} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", n.machine,
                       r.steps, FormatNs(r.step_ns), FormatShare(r.busy_share), FormatNs(r.host_wait_ns),
                       FormatNs(r.kernel_wait_ns), FormatNs(r.other_idle_ns), FormatNs(r.collective_ns),
                       FormatNs(r.compute_ns), FormatNs(r.mean_lag_ns), FormatNs(r.cost_per_step_ns));
  }

  out += fmt::format("\nCPU SIDE (robust score: 0.6745 (value - median) / MAD{})\n",
                     fa.cpu_robust ? "" : "; not possible with fewer than 3 machines");
  out += fmt::format("  {:<16} {:>12} {:>12} {:>12} {:>10} {:>8} {:>10} {:>12} {:>8}\n", "machine", "focus-wait",
                     "interrupted", "softirq-max", "drops/s", "tx-tmo", "rdma-err/s", "rdma-wait/s", "score");
  for (const auto& r : fa.machines) {
    double v[7] = {0, 0, 0, 0, 0, 0, 0}, top = 0;
    int k = 0;
    for (const auto& s : fa.cpu_scores)
      if (s.machine == r.machine) {
        if (k < 7) v[k++] = s.value;
        top = std::max(top, s.score);
      }
    out += fmt::format("  {:<16} {:>12} {:>12} {:>12} {:>10.3g} {:>8.3g} {:>10.3g} {:>12.3g} {:>8}\n",
                       fa.nodes[r.machine].machine, FormatShare(v[0]), FormatShare(v[1]), FormatShare(v[2]), v[3],
                       v[4], v[5], v[6], fa.cpu_robust ? fmt::format("{:.1f}", top) : std::string("-"));
  }

  if (!fa.ranks.empty())
    out += "\nRANKS (arrival lag at matched collectives: how long after the first rank each started)\n";
  for (const auto& r : fa.ranks) {
    const auto& n = fa.nodes[r.machine];
    std::string gpu = r.gpu < n.gpus.size() ? n.gpus[r.gpu].gpu : "GPU";
    out += fmt::format("  {} {} rank {}: mean {}, worst {}, last at {} of {}\n", n.machine, gpu, r.rank,
                       FormatNs(r.mean_lag_ns), FormatNs(r.max_lag_ns), r.last, r.instances);
  }

  out += "\nFINDINGS OF EACH MACHINE (its own report's, top 3)\n";
  for (const auto& r : fa.machines) {
    const auto& n = fa.nodes[r.machine];
    if (n.findings.empty()) {
      out += fmt::format("  {}: none\n", n.machine);
      continue;
    }
    for (size_t i = 0; i < n.findings.size() && i < 3; ++i)
      out += fmt::format("  {}: [{}] {} (cost {})\n", n.machine, n.findings[i].detector, n.findings[i].title,
                         FormatNs(n.findings[i].cost_ns));
  }
  return out;
}

std::string FormatFleetJson(const analyze::FleetAnalysis& fa) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Field("schema", kFleetJsonSchema);
  w.Field("machines_count", static_cast<uint64_t>(fa.nodes.size()));
  w.Field("matched_instances", fa.matched_instances);
  w.Field("steps", fa.steps);
  w.Key("findings");
  w.BeginArray();
  int rank = 0;
  for (const auto& f : fa.findings) WriteFinding(w, f, ++rank);
  w.EndArray();
  w.Key("straggler");
  if (fa.straggler < fa.nodes.size()) {
    w.BeginObject();
    w.Field("machine", fa.nodes[fa.straggler].machine);
    w.Key("causes");
    w.BeginArray();
    rank = 0;
    for (const auto& c : fa.causes) WriteFinding(w, c, ++rank);
    w.EndArray();
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("nodes");
  w.BeginArray();
  for (const auto& r : fa.machines) {
    const auto& n = fa.nodes[r.machine];
    w.BeginObject();
    w.Field("machine", n.machine);
    w.Field("hostname", n.hostname);
    w.Field("boot_id", n.boot_id);
    w.Field("source", n.source);
    w.Field("steps", r.steps);
    w.Field("step_ns", r.step_ns);
    w.Field("busy_share", r.busy_share);
    w.Field("host_wait_per_step_ns", r.host_wait_ns);
    w.Field("kernel_wait_per_step_ns", r.kernel_wait_ns);
    w.Field("other_idle_per_step_ns", r.other_idle_ns);
    w.Field("collective_per_step_ns", r.collective_ns);
    w.Field("compute_per_step_ns", r.compute_ns);
    w.Field("mean_lag_ns", r.mean_lag_ns);
    w.Field("cost_per_step_ns", r.cost_per_step_ns);
    w.Field("peers_wait_per_step_ns", r.peers_wait_per_step_ns);
    w.Key("alignment");
    w.BeginObject();
    w.Field("method", r.alignment.method);
    w.Field("realtime_correction_ns", r.alignment.realtime_correction_ns);
    w.Field("spread_ns", r.alignment.spread_ns);
    w.Field("instances", r.alignment.instances);
    w.Field("note", r.alignment.note);
    w.EndObject();
    w.Key("gpus");
    w.BeginArray();
    for (const auto& g : n.gpus) {
      w.BeginObject();
      w.Field("gpu", g.gpu);
      w.Field("rank", g.rank);
      w.Field("pid", g.pid);
      w.Field("steps", g.steps);
      w.Field("step_ns", g.step_ns);
      w.Field("step_source", g.step_source);
      w.Field("busy_share", g.active_ns ? static_cast<double>(g.busy_ns) / static_cast<double>(g.active_ns) : 0.0);
      w.Field("host_wait_ns", g.host_wait_ns);
      w.Field("kernel_wait_ns", g.kernel_wait_ns);
      w.Field("other_idle_ns", g.other_idle_ns);
      w.Field("collective_ns", g.collective_ns);
      w.Field("compute_ns", g.compute_ns);
      w.EndObject();
    }
    w.EndArray();
    w.Key("findings");
    w.BeginArray();
    int frank = 0;
    for (const auto& f : n.findings) WriteFinding(w, f, ++frank);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("ranks");
  w.BeginArray();
  for (const auto& r : fa.ranks) {
    w.BeginObject();
    w.Field("machine", fa.nodes[r.machine].machine);
    w.Field("gpu", r.gpu < fa.nodes[r.machine].gpus.size() ? fa.nodes[r.machine].gpus[r.gpu].gpu : "");
    w.Field("rank", r.rank);
    w.Field("instances", r.instances);
    w.Field("mean_lag_ns", r.mean_lag_ns);
    w.Field("max_lag_ns", r.max_lag_ns);
    w.Field("last", r.last);
    w.EndObject();
  }
  w.EndArray();
  w.Field("cpu_robust", fa.cpu_robust);
  w.Key("cpu_side");
  w.BeginArray();
  for (const auto& c : fa.cpu_scores) {
    w.BeginObject();
    w.Field("machine", fa.nodes[c.machine].machine);
    w.Field("metric", c.metric);
    w.Field("value", c.value);
    w.Field("median", c.median);
    w.Field("mad", c.mad);
    w.Key("score");
    if (fa.cpu_robust) w.Double(c.score);
    else w.Null();
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes");
  w.BeginArray();
  for (const auto& n : fa.notes) w.String(n);
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace gpunoise::report_export
