// What `gpunoise record` collected of the GPU side and what it lost there:
// written by record/gpu_recording.cc as its own instant on its own track
// (the GPU side is appended after the kernel's session summary is written),
// read back by import/gpu_summary_reader.h, shown on the report's GPU line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpunoise::model {

// Its track and instant. Not "gpunoise GPU capture": that is the CUPTI
// library's own per-process summary, on the process's track.
inline constexpr std::string_view kGpuLossTrackName = "gpunoise GPU collection";
inline constexpr std::string_view kGpuLossEventName = "gpunoise GPU collection";

struct GpuLoss {
  uint64_t processes = 0;  // processes with fragments in the trace
  uint64_t fragments = 0;  // fragments appended, whole or in part
  // Activity records CUPTI could not store for lack of buffer space, added
  // over processes, within the recording (each process's counter at its last
  // fragment in the window, less its counter before the window).
  uint64_t cupti_dropped_records = 0;
  // Chunks of converted GPU data a library dropped while its directory was
  // not yet writable (GPUNOISE_GPU_HOLD_MB full), the same way.
  uint64_t chunks_not_written = 0;
  uint64_t fragments_unreadable = 0;  // nothing of it reached the trace
  uint64_t fragments_truncated = 0;   // cut short: the packets before the damage are in
  uint64_t fragments_late = 0;        // flushed after the collection window closed: not in the trace
  // Processes in other pid namespaces (containers) whose ids were
  // translated to host ids, and the processes and threads that could not
  // be: their GPU data is in the trace, attached to no host thread.
  uint64_t processes_translated = 0;
  uint64_t processes_unmapped = 0;
  uint64_t threads_unmapped = 0;
  // Processes the library did not capture: CUPTI already had a client.
  uint64_t processes_not_captured = 0;
  std::string error;                  // the fragment directory could not be read at all
};

}  // namespace gpunoise::model
