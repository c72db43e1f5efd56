// NVML samples -> Perfetto counter tracks under each GPU's group (the same
// group the CUPTI library puts that GPU's streams in, model/gpu_tracks.h),
// and the note that says why there are none.
#pragma once

#include <string_view>
#include <vector>

#include "common/result.h"
#include "collect/nvml_sampler.h"

namespace gpunoise::perfetto {
class TraceFileWriter;
class TrackEventWriter;
}  // namespace gpunoise::perfetto

namespace gpunoise::gpu {

inline constexpr std::string_view kGpuCountersTrackName = "GPU counters (NVML)";

// Counters per GPU: SM clock (MHz), GPU and memory utilization (%), memory
// used (bytes), temperature (°C), power (W), and the raw throttle-reason
// bitmask; plus a "Clock throttling" track whose slices name the reasons
// while any (other than idle) is active.
Status WriteGpuCounters(const std::vector<GpuInfo>& gpus, const std::vector<GpuSample>& samples,
                        std::string_view node_id, perfetto::TrackEventWriter& writer,
                        perfetto::TraceFileWriter& out);

// An instant on the "GPU counters (NVML)" track saying why there are none.
Status WriteNvmlUnavailable(uint64_t ts, std::string_view reason,
                            perfetto::TrackEventWriter& writer, perfetto::TraceFileWriter& out);

}  // namespace gpunoise::gpu
