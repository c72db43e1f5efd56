// Reads gpunoise's session summary back: the instant "gpunoise recording"
// (track "gpunoise session", export/perfetto/metadata_packets.h) whose args
// name each collector's state and each CPU's losses.
#pragma once

#include <optional>

#include "model/session_info.h"
#include "model/track_events.h"

namespace gpunoise::import {

inline constexpr std::string_view kSessionEventName = "gpunoise recording";

bool IsSessionSummary(const model::TrackEventRecord& event);
// Args it does not know are ignored, so summaries from newer recorders read.
model::SessionInfo ParseSessionSummary(const model::TrackEventRecord& event);

}  // namespace gpunoise::import
