// Reads the recorder's GPU collection summary back: the instant
// model::kGpuLossEventName whose gpu.* args count the processes and
// fragments collected and what the GPU side lost (model/gpu_loss.h).
#pragma once

#include "model/gpu_loss.h"
#include "model/track_events.h"

namespace gpunoise::import {

bool IsGpuLossSummary(const model::TrackEventRecord& event);
// Args it does not know are ignored, so summaries from newer recorders read.
model::GpuLoss ParseGpuLossSummary(const model::TrackEventRecord& event);

}  // namespace gpunoise::import
