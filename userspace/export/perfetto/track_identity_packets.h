// The typed identity of a track (model/track_identity.h) as a TrackEvent
// instant with debug annotations, so that the report finds the track by
// what it is, not by its name.
#pragma once

#include <cstdint>

#include "export/perfetto/trace_packet_builder.h"
#include "model/track_identity.h"

namespace gpunoise::perfetto {

class TrackEventWriter;

// Fills `packet` with the identity of `track`, an instant at `ts` on
// `on_track` (a slice track: a counter track cannot hold instants).
void FillTrackIdentity(TrackEventWriter& writer, TracePacketBuilder* packet, uint64_t ts, uint64_t on_track,
                       uint64_t track, const model::TrackIdentity& id);

}  // namespace gpunoise::perfetto
