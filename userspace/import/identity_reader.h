// Reads the process identities back (export/perfetto/identity_packets.h):
// the typed args of each "gpunoise process identity" instant.
#pragma once

#include "model/process_identity.h"
#include "model/track_events.h"

namespace gpunoise::import {

bool IsProcessIdentity(const model::TrackEventRecord& event);
// Args it does not know are ignored, so identities from newer recorders read.
model::ProcessIdentity ParseProcessIdentity(const model::TrackEventRecord& event);

}  // namespace gpunoise::import
