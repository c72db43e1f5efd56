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
  std::string annotate_path;  // merged-trace input only: a finding track per machine
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

// The machines of a trace: more than one for a merged trace.
Result<size_t> CountMachines(const std::string& path);

// One machine of a trace (`machine_id` of a merged trace; unset: all of it)
// analyzed into its summary, its REALTIME offset from its clock snapshots.
Result<analyze::NodeSummary> SummarizeTraceMachine(const std::string& path, std::optional<uint32_t> machine_id,
                                                   const FleetReportOptions& options);

Result<FleetReportResult> RunFleetReport(const FleetReportOptions& options);

}  // namespace gpunoise::report
