// The cross-node report: which machine, rank and GPU hold a synchronous
// job back, by how much per step, and what on that machine caused it.
//
// From per-node summaries (node_summary.h): every machine's collectives are
// put on one clock (REALTIME, then refined by the instants at which
// all-reduce, all-gather and reduce-scatter instances end, which is nearly
// the same on every rank of a communicator), matched across machines by
// communicator and sequence number, and each rank's arrival lag (how long
// after the first rank it started) is measured. The machine whose ranks
// arrive last costs the job what it makes its peers wait; its own costed
// findings are attached as the likely cause, unless its compute kernels are
// longer than its peers' (a GPU-side cause).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/finding.h"
#include "analyze/node_summary.h"

namespace gpunoise::analyze {

struct FleetOptions {
  bool align_collectives = true;  // refine REALTIME by collective ends
  // A machine whose collectives start this much later per step than its
  // peers' (after alignment) is a straggler.
  uint64_t min_lag_per_step_ns = 500'000;
  // CPU side: a machine whose figure's robust score (0.6745 (x - median) /
  // MAD, Iglewicz and Hoaglin's modified z) is at least this is an outlier.
  double min_robust_score = 3.5;
};

// One CPU-side figure of one machine against the fleet's.
struct CpuScore {
  size_t machine = 0;
  std::string metric;  // "focus_wait_share", "focus_interrupted_share", "softirq_share", "nic_drops_per_s", "tx_timeouts"
  double value = 0, median = 0, mad = 0;
  double score = 0;    // 0 when no robust score is possible
};

struct MachineAlignment {
  std::string method;  // "collectives", "REALTIME", "none"
  int64_t realtime_correction_ns = 0;  // added to REALTIME by the collective ends
  int64_t spread_ns = 0;               // median absolute deviation of the residuals
  uint64_t instances = 0;              // collective instances it was measured on
  std::string note;                    // why it could not be aligned, when it could not
};

struct RankLag {
  size_t machine = 0;
  uint32_t gpu = 0;  // index into that machine's gpus
  int32_t rank = -1;
  uint64_t instances = 0;  // matched instances it took part in
  uint64_t mean_lag_ns = 0, max_lag_ns = 0;
  uint64_t last = 0;  // instances it arrived last at
};

struct MachineRow {
  size_t machine = 0;  // index into the summaries
  uint64_t steps = 0, step_ns = 0;
  double busy_share = 0;
  // Per step, averaged over its GPUs.
  uint64_t host_wait_ns = 0, kernel_wait_ns = 0, other_idle_ns = 0;
  uint64_t collective_ns = 0, compute_ns = 0;
  uint64_t mean_lag_ns = 0;   // its ranks' mean arrival lag per instance
  uint64_t cost_per_step_ns = 0;        // how much later collectives started because of it
  uint64_t peers_wait_per_step_ns = 0;  // rank-time its peers spent waiting for it
  MachineAlignment alignment;
};

struct FleetAnalysis {
  std::vector<NodeSummary> nodes;
  std::vector<MachineRow> machines;  // ranked: most costly first
  std::vector<RankLag> ranks;
  uint64_t matched_instances = 0;    // collective instances seen on at least two machines
  uint64_t steps = 0;                // median steps of the machines
  std::vector<Finding> findings;     // the straggler finding, if any
  // For the straggler finding: its machine (index into nodes) and the
  // findings of that machine given as its likely cause.
  size_t straggler = static_cast<size_t>(-1);
  std::vector<Finding> causes;
  std::vector<std::string> notes;    // what could not be done, for a person
  // CPU side, for every machine: robust only with at least 3 machines.
  bool cpu_robust = false;
  std::vector<CpuScore> cpu_scores;
};

// Machines needed for a robust (median and MAD) score.
inline constexpr size_t kMinMachinesForRobustScore = 3;

FleetAnalysis AnalyzeFleet(std::vector<NodeSummary> nodes, const FleetOptions& options);

}  // namespace gpunoise::analyze
