// Reads a track's typed identity (model/track_identity.h) back from its
// identity instant.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "model/track_events.h"
#include "model/track_identity.h"

namespace gpunoise::import {

bool IsTrackIdentity(const model::TrackEventRecord& event);
// The track it describes and what it is; nullopt without a track uuid or a
// kind this reader knows (a newer writer's kind is skipped, not guessed).
std::optional<std::pair<uint64_t, model::TrackIdentity>> ParseTrackIdentity(const model::TrackEventRecord& event);

}  // namespace gpunoise::import
