// `gpunoise report`: read a trace, analyze it, and produce the text or JSON
// report (and optionally an annotated copy of the trace).
#pragma once

#include <cstdint>
#include <string>

#include "analyze/analysis.h"
#include "analyze/node_summary.h"
#include "common/result.h"
#include "import/trace_reader.h"

namespace gpunoise::report {

struct ReportOptions {
  std::string trace_path;
  bool json = false;
  bool partial = false;
  std::string annotate_path;  // empty: none
  analyze::AnalysisOptions analysis;
  analyze::NodeSummaryOptions node;  // --step; the JSON's "node" summary
};

struct ReportResult {
  std::string output;  // text or JSON
  import::ReadStats read;
  analyze::Analysis analysis;
  bool damaged = false;  // --partial met corruption: the report covers what could be read
  // The trace holds several machines (a merge): nothing was analyzed or
  // written; the cross-node report (fleet_session.h) is the one to make.
  bool several_machines = false;
};

Result<ReportResult> RunReport(const ReportOptions& options);

// "2.5:7", "2.5s:7s", "500ms:", ":10" -> offsets from the first event.
Status ParseWindow(std::string_view text, analyze::AnalysisOptions* options);

// The tids of a cgroup-v2 directory and its descendants, read live
// (`cgroup` is absolute, or relative to the cgroup-v2 mount).
Result<std::vector<int32_t>> CgroupThreads(std::string_view cgroup);
// The same under a given mount point (tests use a directory of their own).
Result<std::vector<int32_t>> CgroupThreadsIn(const std::string& mount, std::string_view cgroup);

}  // namespace gpunoise::report
