// The report for machines; the layout is documented in docs/report.md
// ("JSON schema") and versioned by kJsonSchema.
#pragma once

#include <string>

#include "export/report/report_input.h"

namespace gpunoise::report_export {

std::string FormatJsonReport(const ReportInput& input);

}  // namespace gpunoise::report_export
