// `--annotate OUT.pftrace`: a copy of the trace with the findings added as
// their own tracks, so the Perfetto UI shows them beside the data they are
// about. Under a "gpunoise findings" track, each finding gets a child track
// with one slice over its whole span (args: detector, culprit, cost,
// evidence) and nested slices over its worst windows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/finding.h"
#include "common/result.h"

namespace gpunoise::report_export {

inline constexpr std::string_view kFindingsTrackName = "gpunoise findings";

// TracePackets (serialized) for `findings`, on packet sequence `sequence_id`
// (one the trace does not use yet).
std::vector<std::string> FindingsPackets(const std::vector<analyze::Finding>& findings, uint32_t sequence_id,
                                         uint64_t salt);

// Copies the first `source_bytes` of `source` (whole packets) to `out`, then
// appends `packets`; written to a temporary file and renamed, so `out` is
// never half-written.
Status WriteAnnotatedCopy(const std::string& source, uint64_t source_bytes, const std::string& out,
                          const std::vector<std::string>& packets);

}  // namespace gpunoise::report_export
