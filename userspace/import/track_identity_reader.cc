#include "import/track_identity_reader.h"

namespace gpunoise::import {

bool IsTrackIdentity(const model::TrackEventRecord& event) {
  return event.type == model::TrackEventType::kInstant && event.category == model::kTrackIdentityCategory;
}

std::optional<std::pair<uint64_t, model::TrackIdentity>> ParseTrackIdentity(const model::TrackEventRecord& event) {
  int64_t v = 0;
  const model::TrackArg* uuid = event.FindArg("track_uuid");
  const model::TrackArg* kind = event.FindArg("kind");
  if (!uuid || !kind || kind->type != model::TrackArg::Type::kString) return std::nullopt;
  uint64_t track = uuid->type == model::TrackArg::Type::kUint ? uuid->uint_value
                   : uuid->AsInt64(&v)                       ? static_cast<uint64_t>(v)
                                                             : 0;
  auto k = model::TrackKindFromKey(kind->string_value);
  if (!track || !k) return std::nullopt;
  model::TrackIdentity id;
  id.kind = *k;
  if (const model::TrackArg* a = event.FindArg("device")) id.device = a->ToString();
  // `metric` is a NetMetric's key on a network counter, a NodeMetric's on a
  // node counter.
  if (const model::TrackArg* a = event.FindArg("metric"); a && a->type == model::TrackArg::Type::kString) {
    if (id.kind == model::TrackKind::kNodeCounter)
      id.node_metric = model::NodeMetricFromKey(a->string_value).value_or(model::NodeMetric::kUnknown);
    else
      id.metric = model::NetMetricFromKey(a->string_value).value_or(model::NetMetric::kUnknown);
  }
  if (const model::TrackArg* a = event.FindArg("cpu"); a && a->AsInt64(&v) && v >= 0 && v <= INT32_MAX)
    id.cpu = static_cast<int32_t>(v);
  if (const model::TrackArg* a = event.FindArg("detail")) id.detail = a->ToString();
  if (const model::TrackArg* a = event.FindArg("gpu_uuid"); a && a->type == model::TrackArg::Type::kString)
    id.gpu_uuid = a->string_value;
  if (const model::TrackArg* a = event.FindArg("gpu_index"); a && a->AsInt64(&v) && v >= 0 && v <= INT32_MAX)
    id.gpu_index = static_cast<int32_t>(v);
  if (const model::TrackArg* a = event.FindArg("gpu_model"); a && a->type == model::TrackArg::Type::kString)
    id.gpu_model = a->string_value;
  if (const model::TrackArg* a = event.FindArg("process_track"))
    id.process_track = a->type == model::TrackArg::Type::kUint ? a->uint_value
                       : a->AsInt64(&v)                         ? static_cast<uint64_t>(v)
                                                                : 0;
  return std::make_pair(track, std::move(id));
}

}  // namespace gpunoise::import
