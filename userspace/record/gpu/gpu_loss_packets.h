// The recorder's GPU collection summary as a Perfetto instant with gpu.*
// args, on a track of its own (model/gpu_loss.h): the GPU side is appended
// after the kernel's session summary is written, so it cannot be an arg of
// that one.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "model/gpu_loss.h"

namespace gpunoise::perfetto {
class TraceFileWriter;
class TrackEventWriter;
}  // namespace gpunoise::perfetto

namespace gpunoise::gpu {

Status WriteGpuLoss(uint64_t ts, const model::GpuLoss& loss, perfetto::TrackEventWriter& writer,
                    perfetto::TraceFileWriter& out);

}  // namespace gpunoise::gpu
