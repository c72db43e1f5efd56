// `gpunoise report` over several machines: several traces, a merged trace
// of several machines, or per-node summaries (`gpunoise report --json`
// output), in any mix. Each machine is analyzed on its own, as a one-node
// report would, into a NodeSummary; the summaries make the fleet analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/fleet.h"
#include "analyze/node_summary.h"
#include "common/result.h"
#include "report/report_session.h"

namespace gpunoise::report {

struct FleetReportOptions {
  std::vector<std::string> inputs;
  bool json = false;
  bool partial = false;
  // A finding track per machine: one merged trace gives the copy at this
  // path; several traces a directory of copies (report/fleet_annotate.h).
  std::string annotate_path;
  analyze::AnalysisOptions analysis;
  analyze::NodeSummaryOptions node;
  analyze::FleetOptions fleet;
};

struct FleetReportResult {
  std::string output;
  analyze::FleetAnalysis fleet;
  std::vector<std::string> warnings;  // per input, for stderr
};

// True when `path` holds a JSON document (a per-node summary), not a trace.
bool IsJsonFile(const std::string& path);

// One machine of a trace (`machine_id` of a merged trace; unset: all of it)
// analyzed into its summary, its REALTIME offset from its clock snapshots.
Result<analyze::NodeSummary> SummarizeTraceMachine(const std::string& path, std::optional<uint32_t> machine_id,
                                                   const FleetReportOptions& options);

Result<FleetReportResult> RunFleetReport(const FleetReportOptions& options);

// `gpunoise merge --align collectives`: each machine's correction to its
// REALTIME clock from the ends of the collective instances its GPU data
// shares with the others' (analyze/fleet.h). `machine_of[i]` is input i's
// machine; `realtime_minus_boottime[m]` its clock offset, if known. One
// entry per machine, in machine order.
Result<std::vector<analyze::MachineAlignment>> AlignMachinesByCollectives(
    const std::vector<std::string>& inputs, const std::vector<uint32_t>& machine_of,
    const std::vector<std::optional<int64_t>>& realtime_minus_boottime);

}  // namespace gpunoise::report
