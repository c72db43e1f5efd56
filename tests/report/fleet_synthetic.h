// A synthetic data-parallel job on several machines for the cross-node
// report's tests: every machine's GPU data is made of real CUPTI record
// types run through the CUPTI library's converter (kernels, launch calls,
// NCCL's NVTX ranges with the communicator as payload), its kernel side
// (who ran where, softirqs) through the same TimelineBuilder the report
// uses; each machine has its own BOOTTIME and a REALTIME clock that is off
// by up to a few hundred microseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/node_summary.h"

namespace gpunoise::testing {

struct SynthMachine {
  std::string name;
  int64_t clock_error_ns = 0;   // its REALTIME minus the true wall time
  uint64_t storm_ns = 0;        // NET_RX on GPU 0's launcher's CPU at each step start (delays its launch)
  bool decoy_storm = false;     // the same storm on a CPU no launcher uses
  uint64_t extra_compute_ns = 0;  // GPU 0's compute kernel is this much longer
};

struct SynthJob {
  std::vector<SynthMachine> machines;
  int steps = 30;
  uint64_t period_ns = 14'000'000;
  uint64_t compute_ns = 4'000'000;
  uint64_t jitter_ns = 30'000;  // uniform +- on every collective's start and end
  // Rank absent from the second communicator (an all-gather among the rest).
  int absent_from_b = -1;
  uint32_t seed = 1;
  // NVTX ranges of this name around each rank's step (its launcher's
  // thread, from the step's start to the all-gather's launch); empty: none.
  std::string step_range;
  std::string step_name;  // --step given to the node summaries
  // NCCL 2.19+: the collectives' ranges carry typed fields (communicator,
  // message size, schema), as the CUPTI library decodes them from NCCL's
  // extended NVTX payload and joins them with CUPTI's range records, and no
  // scalar payload; the ranges are named "NCCL collective", so nothing can
  // be read from their names.
  bool typed_payloads = false;
  // With typed_payloads: on this machine the all-reduce of this step
  // carries a different message size than its peers'.
  int size_mismatch_machine = -1;
  int size_mismatch_step = -1;
};

inline constexpr uint64_t kAllReduceBytes = 64ull << 20;
inline constexpr uint64_t kAllGatherBytes = 8ull << 20;

struct SynthNode {
  analyze::Analysis analysis;
  analyze::NodeSummary summary;
  std::string trace_path;  // with BuildJob's `dir`: the machine as a trace file
};

// Communicator ids (NVTX payloads of NCCL's ranges).
inline constexpr uint64_t kCommA = 0x5eed000000000a11ull;
inline constexpr uint64_t kCommB = 0x5eed00000000b0b0ull;

// With `dir`, each machine is also written as a trace file there (process
// tree, SystemInfo with its machine name, a clock snapshot with its REALTIME,
// ftrace bundles, the GPU fragment): "<name>.pftrace".
std::vector<SynthNode> BuildJob(const SynthJob& job, const std::string& dir = "");

}  // namespace gpunoise::testing
