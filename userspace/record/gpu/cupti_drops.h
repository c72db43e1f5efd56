// CUPTI's dropped-record count as one fragment file states it: the largest
// value of the process's "CUPTI dropped records" counter in it, or the
// dropped_records arg of its summary instant (model/gpu_capture.h). The
// count is cumulative for the process since capture began.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpunoise::gpu {

// What one fragment states of its process's loss, both counts cumulative
// since capture began. `dropped_records` is nullopt when the fragment does
// not state it (the counter is written only in fragments where it changed);
// `chunks_not_written` (converted data the library held back while its
// directory was not writable, then dropped for the hold limit) is stated
// only by the summary of a process's last fragment. A damaged fragment
// gives what its readable part states.
struct CuptiLossCounts {
  std::optional<uint64_t> dropped_records;
  uint64_t chunks_not_written = 0;
};
CuptiLossCounts CuptiLossIn(const std::string& path);

// The library's note that it did not capture its process
// (model::kCuptiCaptureOffEvent): "pid N (comm): reason"; nullopt if the
// fragment holds none.
std::optional<std::string> CaptureOffIn(const std::string& path);

}  // namespace gpunoise::gpu
