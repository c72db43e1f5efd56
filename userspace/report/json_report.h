// The report for machines; the layout is documented in docs/report.md
// ("JSON schema") and versioned by kJsonSchema.
#pragma once

#include <string>

#include "report/report_input.h"

namespace gpunoise::report_export {

class JsonWriter;

std::string FormatJsonReport(const ReportInput& input);

// One finding as an element of "findings" (rank: its place, from 1).
void WriteFinding(JsonWriter& w, const analyze::Finding& f, int rank);

}  // namespace gpunoise::report_export
