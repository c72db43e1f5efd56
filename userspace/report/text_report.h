// The report for a person: what it covers and what was lost first, then the
// findings ranked by what they cost the focus threads (each with when,
// where, how much and the evidence), then the summary tables.
#pragma once

#include <string>

#include "report/report_input.h"

namespace gpunoise::report_export {

std::string FormatTextReport(const ReportInput& input);

}  // namespace gpunoise::report_export
