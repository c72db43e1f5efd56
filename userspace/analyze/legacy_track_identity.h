// The one place that reads track names: traces written before tracks
// carried their identity (model/track_identity.h) named what they were, and
// this recovers that identity from the names they used then (the metadata
// tracks, "Network" / "<label> <metric>" counters, "Node" / "cpu<N> steal",
// "cpu<N> idle state", "cpu<N> frequency" and "cgroup <path> nr_throttled"
// counters, counters named like the kernel's "softlockup_count", "GPU ..."
// groups and their "stream" tracks, "<name> <pid>" process groups), so that old
// recordings, and other producers that name GPU tracks that way
// (docs/report.md), give the same findings. A track that has a typed identity is
// never looked up here.
#pragma once

#include <cstdint>
#include <optional>

#include "analyze/timeline.h"
#include "model/track_identity.h"

namespace gpunoise::analyze {

// The identity an old trace's track `uuid` had by its name (and its
// ancestors' names); nullopt for a name this project never gave a typed
// meaning.
std::optional<model::TrackIdentity> LegacyTrackIdentity(const TrackData& tracks, uint64_t uuid);

}  // namespace gpunoise::analyze
