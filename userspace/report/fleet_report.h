// The cross-node report's text and JSON forms (docs/fleet.md): the
// straggler finding, the NODES table, per-GPU lags, alignment, and each
// machine's own top findings.
#pragma once

#include <string>

#include "analyze/fleet.h"

namespace gpunoise::report_export {

inline constexpr std::string_view kFleetJsonSchema = "gpunoise.fleet/1";

std::string FormatFleetText(const analyze::FleetAnalysis& fa);
std::string FormatFleetJson(const analyze::FleetAnalysis& fa);

}  // namespace gpunoise::report_export
