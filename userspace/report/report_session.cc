#include "report/report_session.h"

#include <random>

#include "analyze/timeline_builder.h"
#include "common/cgroup_mount.h"
#include "common/files.h"
#include "common/strings.h"
#include "merge/machine_alignment.h"
#include "report/annotated_trace.h"
#include "report/json_report.h"
#include "report/text_report.h"

namespace gpunoise::report {
namespace {

void CollectCgroup(const std::string& dir, std::vector<int32_t>* out, int depth) {
  if (auto threads = ReadFileToString(dir + "/cgroup.threads"); threads.ok()) {
    for (auto line : Split(*threads, '\n'))
      if (auto tid = ParseInt64(line)) out->push_back(static_cast<int32_t>(*tid));
  }
  if (depth > 32) return;
  auto entries = ListDirectory(dir);
  if (!entries.ok()) return;
  for (const auto& e : *entries) {
    std::string child = dir + "/" + e;
    if (PathExists(child + "/cgroup.threads")) CollectCgroup(child, out, depth + 1);
  }
}

}  // namespace

Result<std::vector<int32_t>> CgroupThreadsIn(const std::string& mount, std::string_view cgroup) {
  // As `record --cgroup` takes it: absolute, or relative to the mount.
  std::string path(cgroup);
  if (path.empty() || path[0] != '/') path = mount + "/" + path;
  if (!PathExists(path + "/cgroup.threads"))
    return MakeError("failed to resolve cgroup {}: {} is not a cgroup-v2 directory on this node (cgroups are "
                     "resolved live: run the report where the trace was recorded, while the tasks exist)",
                     cgroup, path);
  std::vector<int32_t> tids;
  CollectCgroup(path, &tids, 0);
  return tids;
}

Result<std::vector<int32_t>> CgroupThreads(std::string_view cgroup) {
  GN_ASSIGN_OR_RETURN(std::string mount, CgroupV2Mount());
  return CgroupThreadsIn(mount, cgroup);
}

Status ParseWindow(std::string_view text, analyze::AnalysisOptions* options) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    return MakeError("--window wants START:END in seconds from the trace start (e.g. 2.5:7, 500ms:, :10s), got '{}'", text);
  std::string_view a = Trim(text.substr(0, colon)), b = Trim(text.substr(colon + 1));
  if (!a.empty()) {
    auto v = ParseDuration(a);
    if (!v.ok()) return MakeError("--window start: {}", v.error().message);
    options->window_start = *v;
  }
  if (!b.empty()) {
    auto v = ParseDuration(b);
    if (!v.ok()) return MakeError("--window end: {}", v.error().message);
    options->window_end = *v;
  }
  if (options->window_start && options->window_end && *options->window_end <= *options->window_start)
    return MakeError("--window end must be after its start, got '{}'", text);
  return OkStatus();
}

Result<ReportResult> RunReport(const ReportOptions& options) {
  ReportResult result;
  analyze::TimelineBuilder builder;
  import::ReadOptions read_options;
  read_options.partial = options.partial;
  import::TraceReader reader(builder, read_options);
  GN_ASSIGN_OR_RETURN(result.read, reader.ReadFile(options.trace_path));
  result.damaged = !result.read.problems.empty();
  if (result.read.machine_ids.size() > 1) {
    result.several_machines = true;
    return result;
  }
  analyze::Timeline timeline = builder.Finish();
  if (!timeline.start_ts) {
    if (result.damaged) return MakeError("{} (nothing before it could be analyzed)", result.read.problems.front());
    return MakeError("failed to analyze {}: it holds no scheduling or interrupt events ({} packets read)",
                     options.trace_path, result.read.packets);
  }
  analyze::AnalysisOptions analysis_options = options.analysis;
  if (!analysis_options.cgroups) analysis_options.cgroups = CgroupThreads;
  GN_ASSIGN_OR_RETURN(result.analysis, analyze::Analyze(timeline, analysis_options));

  report_export::ReportInput input{options.trace_path, &result.analysis, &result.read};
  // The JSON carries this node's summary, so a fleet report can be made of
  // the nodes' JSON files (docs/fleet.md).
  analyze::NodeSummary node;
  if (options.json) {
    node = analyze::SummarizeNode(timeline, result.analysis, options.node);
    node.source = options.trace_path;
    if (options.trace_path != "-") {
      if (auto m = perfetto::ScanInputMachine(options.trace_path); m.ok()) {
        if (node.machine.empty()) node.machine = m->machine_name;
        if (node.boot_id.empty()) node.boot_id = m->boot_id;
        if (m->clocks) {
          node.has_realtime = true;
          node.realtime_minus_boottime = m->clocks->realtime - m->clocks->boottime;
        }
      }
    }
    input.node = &node;
  }
  result.output = options.json ? report_export::FormatJsonReport(input) : report_export::FormatTextReport(input);

  if (!options.annotate_path.empty()) {
    std::random_device rd;
    uint64_t salt = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    uint32_t sequence = result.read.max_sequence_id + 1;
    auto packets = report_export::FindingsPackets(result.analysis.findings, sequence, salt);
    GN_RETURN_IF_ERROR(report_export::WriteAnnotatedCopy(options.trace_path, result.read.bytes,
                                                         options.annotate_path, packets));
  }
  return result;
}

}  // namespace gpunoise::report
