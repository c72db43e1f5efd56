#include "export/perfetto/track_identity_packets.h"

#include "export/perfetto/track_event_writer.h"

namespace gpunoise::perfetto {

void FillTrackIdentity(TrackEventWriter& writer, TracePacketBuilder* packet, uint64_t ts, uint64_t on_track,
                       uint64_t track, const model::TrackIdentity& id) {
  EventRef e =
      writer.FillInstant(packet, ts, on_track, model::kTrackIdentityEventName, model::kTrackIdentityCategory);
  AddArg(e, "track_uuid", track);
  AddArg(e, "kind", model::TrackKindKey(id.kind));
  if (!id.device.empty()) AddArg(e, "device", id.device);
  if (id.metric != model::NetMetric::kUnknown) AddArg(e, "metric", model::NetMetricKey(id.metric));
  if (id.cpu >= 0) AddArg(e, "cpu", id.cpu);
  if (!id.detail.empty()) AddArg(e, "detail", id.detail);
}

}  // namespace gpunoise::perfetto
