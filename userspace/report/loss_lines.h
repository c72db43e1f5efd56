// The report header's loss lines (DESIGN.md decision 3: loss first, by stage
// and cause): what the analysis' LossSummary holds, in words, one line per
// stage or per kind of trouble, only for what is there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyze/analysis.h"

namespace gpunoise::report_export {

// Lines without indentation or newline; the first is always the total.
std::vector<std::string> LossLines(const analyze::LossSummary& loss);

// The GPU line ("GPU: 3 processes, 41 fragments; lost: ..."); empty when the
// trace has no GPU collection summary.
std::string GpuLossLine(const model::GpuLoss& gpu);

// FtraceParseStatus code -> upstream enum name ("FTRACE_STATUS_ABI_END_OVERFLOW").
std::string_view FtraceParseStatusName(uint32_t code);

}  // namespace gpunoise::report_export
