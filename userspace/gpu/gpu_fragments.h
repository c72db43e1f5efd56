// Collecting the CUPTI library's fragment files (model/gpu_capture.h) into
// a recording.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace gpunoise::perfetto {
class TraceMerger;
}

namespace gpunoise::gpu {

// Fragment files in `dir` flushed within [from_ts, to_ts] (CLOCK_BOOTTIME;
// to_ts 0: no upper limit), ordered by process, then time. Temporary files
// (a flush in progress) are never listed.
Result<std::vector<std::string>> ListGpuFragments(const std::string& dir, uint64_t from_ts,
                                                  uint64_t to_ts);

struct FragmentsAppended {
  size_t files = 0;
  size_t processes = 0;
  uint64_t packets = 0;
  std::vector<std::string> problems;  // one line per fragment that was cut short
};

// Appends each fragment with its own sequence ids. A corrupt fragment keeps
// the packets before the damage and is reported, never fatal: the kernel
// side and the other processes' data are worth keeping.
FragmentsAppended AppendGpuFragments(const std::vector<std::string>& files,
                                     perfetto::TraceMerger& merger);

}  // namespace gpunoise::gpu
