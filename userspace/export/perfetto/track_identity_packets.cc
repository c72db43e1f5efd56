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
  if (id.node_metric != model::NodeMetric::kUnknown) AddArg(e, "metric", model::NodeMetricKey(id.node_metric));
  if (id.cpu >= 0) AddArg(e, "cpu", id.cpu);
  if (!id.detail.empty()) AddArg(e, "detail", id.detail);
  if (!id.gpu_uuid.empty()) AddArg(e, "gpu_uuid", id.gpu_uuid);
  if (id.gpu_index >= 0) AddArg(e, "gpu_index", id.gpu_index);
  if (!id.gpu_model.empty()) AddArg(e, "gpu_model", id.gpu_model);
}

}  // namespace gpunoise::perfetto
