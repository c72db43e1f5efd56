#include "report/fleet_session.h"

#include <fmt/format.h>

#include <memory>

#include "analyze/timeline_builder.h"
#include "common/files.h"
#include "common/json_value.h"
#include "common/unique_fd.h"
#include "merge/machine_alignment.h"
#include "merge/trace_merger.h"
#include "report/fleet_report.h"
#include "report/node_json.h"
#include "report/fleet_annotate.h"

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
  // For --annotate: each trace file as read, and its machines.
  std::vector<AnnotateSource> sources;
  bool any_json = false;

  for (const std::string& path : options.inputs) {
    if (IsJsonFile(path)) {
      GN_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
      auto doc = ParseJson(text);
      if (!doc.ok()) return MakeError("failed to read {}: {}", path, doc.error().message);
      GN_ASSIGN_OR_RETURN(analyze::NodeSummary n, report_export::ParseNodeReport(*doc, path));
      nodes.push_back(std::move(n));
      any_json = true;
      continue;
    }
    GN_ASSIGN_OR_RETURN(auto machines, perfetto::ScanTraceMachines(path));
    AnnotateSource& source = sources.emplace_back();
    source.path = path;
    source.merged = machines.size() > 1;
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
      source.max_sequence = std::max(source.max_sequence, r.read.max_sequence_id);
      source.bytes = r.read.bytes;
      source.machines.emplace_back(nodes.size(), id);
      nodes.push_back(std::move(r.node));
    }
  }
  if (!options.annotate_path.empty() && any_json)
    return MakeError("--annotate needs traces: a JSON summary has no trace to copy the findings into");

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

  if (!options.annotate_path.empty())
    GN_RETURN_IF_ERROR(WriteFleetAnnotations(result.fleet, sources, options.annotate_path));
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
