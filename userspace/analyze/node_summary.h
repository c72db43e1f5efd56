// What one node (one machine) contributes to the cross-node report: per GPU
// and rank its step time, busy share, idle time split as Holistic Trace
// Analysis does (host wait, kernel wait, other), time in collective kernels;
// each collective call it made, keyed so the same instance can be found on
// the other ranks; its own costed findings; and its CPU-side figures. Small
// and independent of the Timeline, so `gpunoise report --json` can carry it
// and a fleet report can be made from hundreds of them (DESIGN.md #9).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/finding.h"
#include "analyze/timeline.h"

namespace gpunoise::analyze {

// One call of a collective on one rank. Ranks of a communicator issue its
// collectives in one order (NCCL requires it), so the k-th call on a
// communicator is the same instance on every rank: `seq` counts the calls
// of this process on `comm`.
struct CollectiveCall {
  // Communicator: the NCCL range's typed nccl_comm field (its extended NVTX
  // payload), else its scalar payload; 0: unknown.
  uint64_t comm = 0;
  uint32_t seq = 0;
  std::string op;     // "AllReduce": the range's payload schema, else the kernel name
  uint64_t bytes = 0;  // message size from the typed payload; 0: unknown
  int32_t rank = -1;
  uint32_t gpu = 0;   // index into NodeSummary::gpus
  uint64_t start = 0, end = 0;  // the machine's BOOTTIME
};

// All-reduce, all-gather and reduce-scatter end together on every rank of
// their communicator; broadcast, reduce, send/recv and all-to-all do not.
bool EndsTogether(std::string_view op);
// "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)" -> "AllReduce"; empty when
// the name is not an NCCL collective kernel.
std::string CollectiveOp(std::string_view kernel_name);

struct GpuSummary {
  std::string gpu;  // "GPU 0 (H200)"
  int32_t pid = 0;
  std::string process;
  int32_t rank = -1;
  uint64_t active_ns = 0;  // first work start .. last work end
  uint64_t busy_ns = 0;    // union of its work
  uint64_t collective_ns = 0;  // union of its NCCL kernels
  uint64_t compute_ns = 0;     // busy, not in collectives
  // Idle time inside the active span: the launch of the work that ended a
  // gap came after the gap began (host wait: the launcher had not enqueued
  // it); a gap shorter than kernel_wait_max_ns with the work already
  // enqueued (kernel wait: launch overhead between queued kernels); the rest.
  uint64_t idle_ns = 0, host_wait_ns = 0, kernel_wait_ns = 0, other_idle_ns = 0;
  uint64_t steps = 0;
  uint64_t step_ns = 0;     // median step time
  std::string step_source;  // "nvtx NAME", "collective period", "active span"
};

// CPU-side figures of a node, for fleets without GPU data.
struct CpuSideSummary {
  uint64_t focus_observed_ns = 0, focus_wait_ns = 0, focus_interrupted_ns = 0;
  double max_softirq_share = 0;  // the busiest CPU's softirq share
  uint32_t max_softirq_cpu = 0;
  uint64_t nic_drops = 0, tx_timeouts = 0;
  // RDMA ports (the recorder's "rdma port" totals, whole recording): error
  // counters summed, port_xmit_wait (congestion: ticks a port had data it
  // could not send) summed, ports seen.
  uint64_t rdma_ports = 0, rdma_errors = 0, rdma_xmit_wait = 0;
};

struct NodeSummary {
  std::string machine;  // --machine-name, else the hostname
  std::string hostname, boot_id;
  std::string source;   // the file it came from
  // REALTIME - BOOTTIME at the recording's clock snapshot: puts this node's
  // timestamps on the wall clock NTP/PTP keeps common.
  bool has_realtime = false;
  int64_t realtime_minus_boottime = 0;
  uint64_t start_ns = 0, end_ns = 0;  // analysis window, BOOTTIME
  std::vector<GpuSummary> gpus;
  std::vector<CollectiveCall> collectives;  // by start
  std::vector<Finding> findings;            // this node's, ranked
  CpuSideSummary cpu;
};

struct NodeSummaryOptions {
  std::string step_name;  // --step: NVTX ranges of this name are steps
  uint64_t kernel_wait_max_ns = 50'000;
};

// The rank of a GPU process: the join point for rank sources (today the
// CUPTI library's capture summary; -1 when unknown).
int32_t RankOfProcess(const Timeline& t, int32_t pid);

NodeSummary SummarizeNode(const Timeline& t, const Analysis& a, const NodeSummaryOptions& options);

}  // namespace gpunoise::analyze
