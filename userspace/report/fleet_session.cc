#include "report/fleet_session.h"

#include <fmt/format.h>

#include <memory>
#include <random>

#include "analyze/timeline_builder.h"
#include "common/files.h"
#include "common/json_value.h"
#include "common/unique_fd.h"
#include "export/perfetto/machine_alignment.h"
#include "export/perfetto/trace_merger.h"
#include "export/report/annotated_trace.h"
#include "export/report/fleet_report.h"
#include "export/report/node_json.h"

#include <fcntl.h>
#include <unistd.h>

namespace gpunoise::report {
namespace {

struct MachineRead {
  analyze::NodeSummary node;
  import::ReadStats read;
};

Result<MachineRead> ReadMachine(const std::string& path, std::optional<uint32_t> machine_id,
                                const perfetto::InputMachine& info, const FleetReportOptions& options) {
  MachineRead out;
  analyze::TimelineBuilder builder;
  import::ReadOptions read_options;
  read_options.partial = options.partial;
  read_options.machine_id = machine_id;
  import::TraceReader reader(builder, read_options);
  GN_ASSIGN_OR_RETURN(out.read, reader.ReadFile(path));
  analyze::Timeline timeline = builder.Finish();
  std::string which = machine_id ? fmt::format("{} (machine {})", path, *machine_id) : path;
  if (!timeline.start_ts)
    return MakeError("failed to analyze {}: it holds no scheduling or interrupt events ({} packets read)", which,
                     out.read.packets);
  analyze::AnalysisOptions analysis_options = options.analysis;
  if (!analysis_options.cgroups) analysis_options.cgroups = CgroupThreads;
  GN_ASSIGN_OR_RETURN(analyze::Analysis analysis, analyze::Analyze(timeline, analysis_options));
  out.node = analyze::SummarizeNode(timeline, analysis, options.node);
  out.node.source = which;
  if (out.node.machine.empty()) out.node.machine = info.machine_name;
  if (out.node.boot_id.empty()) out.node.boot_id = info.boot_id;
  if (info.clocks) {
    out.node.has_realtime = true;
    out.node.realtime_minus_boottime = info.clocks->realtime - info.clocks->boottime;
  }
  return out;
}

Result<std::string> ReadSmallFile(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return MakeError("failed to read {}: {}", path, text.error().message);
  return *text;
}

}  // namespace

bool IsJsonFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  char buf[64];
  ssize_t n = ::read(fd.get(), buf, sizeof(buf));
  // Every trace starts with 0x0a (the tag of Trace.packet), which is also a
  // newline: a file starting with it is a trace.
  if (n <= 0 || buf[0] == '\n') return false;
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t') continue;
    return buf[i] == '{';
  }
  return false;
}

Result<analyze::NodeSummary> SummarizeTraceMachine(const std::string& path, std::optional<uint32_t> machine_id,
                                                   const FleetReportOptions& options) {
  GN_ASSIGN_OR_RETURN(auto machines, perfetto::ScanTraceMachines(path));
  perfetto::InputMachine info = machines[machine_id.value_or(0)];
  GN_ASSIGN_OR_RETURN(MachineRead r, ReadMachine(path, machine_id, info, options));
  return std::move(r.node);
}

Result<FleetReportResult> RunFleetReport(const FleetReportOptions& options) {
  FleetReportResult result;
  std::vector<analyze::NodeSummary> nodes;
  // For --annotate on a merged trace: what was read of it, per machine.
  std::vector<uint32_t> machine_ids;
  import::ReadStats merged_read;
  uint32_t max_sequence = 0;

  for (const std::string& path : options.inputs) {
    if (IsJsonFile(path)) {
      GN_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
      auto doc = ParseJson(text);
      if (!doc.ok()) return MakeError("failed to read {}: {}", path, doc.error().message);
      GN_ASSIGN_OR_RETURN(analyze::NodeSummary n, report_export::ParseNodeReport(*doc, path));
      nodes.push_back(std::move(n));
      continue;
    }
    GN_ASSIGN_OR_RETURN(auto machines, perfetto::ScanTraceMachines(path));
    for (const auto& [id, info] : machines) {
      std::optional<uint32_t> filter;
      if (machines.size() > 1) filter = id;
      GN_ASSIGN_OR_RETURN(MachineRead r, ReadMachine(path, filter, info, options));
      for (const auto& p : r.read.problems) result.warnings.push_back(p);
      if (std::string w = perfetto::UnsyncedClockWarning(info); !w.empty()) result.warnings.push_back(w);
      if (!info.clocks)
        result.warnings.push_back(fmt::format("{}: no REALTIME clock snapshot: its machine stays on its own "
                                              "BOOTTIME unless collectives align it",
                                              r.node.source));
      max_sequence = std::max(max_sequence, r.read.max_sequence_id);
      merged_read = r.read;
      machine_ids.push_back(id);
      nodes.push_back(std::move(r.node));
    }
  }
  if (!options.annotate_path.empty() && (options.inputs.size() != 1 || IsJsonFile(options.inputs.front())))
    return MakeError("--annotate with several machines needs them in one merged trace (gpunoise merge A B ... -o "
                     "ALL.pftrace, then gpunoise report ALL.pftrace --annotate OUT.pftrace)");

  // Two boots of one host are two machines: "node1 (boot 1)", "node1 (boot 2)".
  std::vector<perfetto::MachineIdentity> identity;
  for (const auto& n : nodes)
    identity.push_back({n.machine, n.boot_id,
                        n.has_realtime ? std::optional<int64_t>(n.realtime_minus_boottime) : std::nullopt});
  std::vector<std::string> labels = perfetto::MachineLabels(identity);
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i].machine = labels[i];

  result.fleet = analyze::AnalyzeFleet(std::move(nodes), options.fleet);
  result.output = options.json ? report_export::FormatFleetJson(result.fleet)
                               : report_export::FormatFleetText(result.fleet);

  if (!options.annotate_path.empty()) {
    // A finding track per machine, in that machine's timeline: its own
    // findings, and the straggler finding on the straggler's.
    std::random_device rd;
    std::vector<std::string> packets;
    for (size_t i = 0; i < result.fleet.nodes.size() && i < machine_ids.size(); ++i) {
      std::vector<analyze::Finding> findings;
      if (i == result.fleet.straggler) findings = result.fleet.findings;
      for (const auto& f : result.fleet.nodes[i].findings) findings.push_back(f);
      if (findings.empty()) continue;
      uint64_t salt = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ i;
      uint32_t sequence = max_sequence + 1 + static_cast<uint32_t>(i);
      for (const std::string& p : report_export::FindingsPackets(findings, sequence, salt)) {
        GN_ASSIGN_OR_RETURN(std::string tagged,
                            perfetto::RenumberSequence(p, [](uint32_t id) { return id; }, machine_ids[i]));
        packets.push_back(std::move(tagged));
      }
    }
    GN_RETURN_IF_ERROR(report_export::WriteAnnotatedCopy(options.inputs.front(), merged_read.bytes,
                                                         options.annotate_path, packets));
  }
  return result;
}

Result<std::vector<analyze::MachineAlignment>> AlignMachinesByCollectives(
    const std::vector<std::string>& inputs, const std::vector<uint32_t>& machine_of,
    const std::vector<std::optional<int64_t>>& realtime_minus_boottime) {
  const size_t machines = realtime_minus_boottime.size();
  // Each machine's inputs (its recording, its GPU fragments) into one timeline.
  std::vector<std::unique_ptr<analyze::TimelineBuilder>> builders;
  for (size_t m = 0; m < machines; ++m) builders.push_back(std::make_unique<analyze::TimelineBuilder>());
  for (size_t i = 0; i < inputs.size(); ++i) {
    import::TraceReader reader(*builders[machine_of[i]]);
    auto read = reader.ReadFile(inputs[i]);
    if (!read.ok()) return read.error();
  }
  std::vector<analyze::NodeSummary> nodes;
  for (size_t m = 0; m < machines; ++m) {
    analyze::Timeline t = builders[m]->Finish();
    analyze::Analysis whole;  // only the GPU side is summarized: the window is everything
    whole.from = 0;
    whole.to = UINT64_MAX;
    analyze::NodeSummary n = analyze::SummarizeNode(t, whole, {});
    n.findings.clear();
    n.has_realtime = realtime_minus_boottime[m].has_value();
    n.realtime_minus_boottime = realtime_minus_boottime[m].value_or(0);
    nodes.push_back(std::move(n));
  }
  analyze::FleetOptions options;
  options.align_collectives = true;
  analyze::FleetAnalysis fa = analyze::AnalyzeFleet(std::move(nodes), options);
  std::vector<analyze::MachineAlignment> out(machines);
  for (const auto& row : fa.machines) out[row.machine] = row.alignment;
  return out;
}

}  // namespace gpunoise::report
