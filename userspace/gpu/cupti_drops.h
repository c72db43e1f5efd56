// CUPTI's dropped-record count as one fragment file states it: the largest
// value of the process's "CUPTI dropped records" counter in it, or the
// dropped_records arg of its summary instant (model/gpu_capture.h). The
// count is cumulative for the process since capture began.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpunoise::gpu {

// nullopt: the fragment does not state the count (the counter is written
// only in fragments where it changed). A damaged fragment gives what its
// readable part states.
std::optional<uint64_t> CuptiDroppedRecordsIn(const std::string& path);

// The library's note that it did not capture its process
// (model::kCuptiCaptureOffEvent): "pid N (comm): reason"; nullopt if the
// fragment holds none.
std::optional<std::string> CaptureOffIn(const std::string& path);

}  // namespace gpunoise::gpu
