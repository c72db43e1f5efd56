// What the report writers format: the analysis, and where it came from.
#pragma once

#include <string>

#include "analyze/analysis.h"
#include "analyze/node_summary.h"
#include "import/trace_reader.h"

namespace gpunoise::report_export {

struct ReportInput {
  std::string trace_path;
  const analyze::Analysis* analysis = nullptr;
  const import::ReadStats* read = nullptr;
  const analyze::NodeSummary* node = nullptr;  // JSON: the "node" object, when set
};

// Version of the JSON layout (docs/report.md): bump on incompatible changes.
inline constexpr std::string_view kJsonSchema = "gpunoise.report/1";

}  // namespace gpunoise::report_export
