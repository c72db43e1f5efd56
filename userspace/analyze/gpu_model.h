// GPU work and the CPU threads that launched it, from track events: slices on
// tracks of kind gpu_stream (model/track_identity.h) are GPU work (kernels,
// copies, memsets); a launch is a slice on a thread track joined to GPU work
// by a flow or by an equal correlation id. docs/report.md says what a
// producer must write for this to work (the CUPTI library does).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyze/timeline.h"

namespace gpunoise::analyze {

struct GpuWork {
  uint64_t start = 0, end = 0;
  int32_t pid = 0;         // the process the work belongs to (0: unknown)
  int32_t launch_tid = 0;  // the thread that launched it (0: unknown)
  uint64_t launch_ts = 0;  // when the launch call began
  uint64_t track = 0;
  uint32_t name = 0;  // TrackData string
  // The GPU: the outermost gpu_device track above the work's track (the
  // GPU's group, which the CUPTI library shares among a node's processes).
  uint64_t gpu = 0;
};

struct GpuModel {
  std::vector<GpuWork> work;       // sorted by start
  std::set<int32_t> launch_tids;   // threads that launch GPU work
  std::set<uint64_t> gpu_tracks;
  std::map<uint64_t, std::string> gpu_names;  // GpuWork::gpu -> "GPU 3 (H200)", for people
  bool present() const { return !work.empty(); }
};

GpuModel BuildGpuModel(const Timeline& t);

}  // namespace gpunoise::analyze
