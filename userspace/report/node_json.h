// A node's summary in the report's JSON (the "node" object of
// `gpunoise report --json`), and read back: what a fleet report is made of
// when the nodes' full traces stay on the nodes (docs/fleet.md).
#pragma once

#include <string>

#include "analyze/node_summary.h"
#include "common/json_value.h"
#include "common/result.h"
#include "report/json_writer.h"

namespace gpunoise::report_export {

void WriteNodeSummary(JsonWriter& w, const analyze::NodeSummary& n);

// One finding from its JSON form (an element of "findings").
analyze::Finding ParseFinding(const JsonValue& v);

// A node from a whole `gpunoise report --json` document: its "node" object
// and its "findings". An error when the document is not a report or has no
// node summary (a report of an older gpunoise).
Result<analyze::NodeSummary> ParseNodeReport(const JsonValue& report, const std::string& path);

}  // namespace gpunoise::report_export
