// The middle stages of `gpunoise record` (record_session.h): open the gate
// and write the trace's header, run the loop that drains the rings until the
// duration, a stop or the workload's exit ends it, and stop the collectors.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "model/host_info.h"
#include "model/process_snapshot.h"
#include "model/rdma_counters.h"
#include "record/drain.h"
#include "record/drain_priority.h"
#include "record/prepare_collectors.h"
#include "record/softirq_audit.h"

namespace gpunoise::record {

struct RecordOptions;

// What the start leaves for the rest of the recording.
struct TraceStart {
  // The RDMA ports' counters when the gate opened (empty without RDMA).
  std::vector<model::RdmaPort> rdma_start;
  // Readable once the workload (-- CMD) has exited; -1: none.
  int workload_fd = -1;
  // The drain's yielding (record/drain_priority.h), made before the
  // privilege drop. Never null.
  std::unique_ptr<DrainYield> drain_yield;
  // The kernel's softirq counts against the entry program's, from the
  // gate's opening (empty when they cannot be compared).
  std::optional<SoftirqAudit> softirq_audit;
};

// Opens the gate (at --start-at, if given): session.start_ts. Then writes
// the header with `processes` and starts the network and node counters,
// the workload and the privilege drop (RecordOptions' callbacks).
Result<TraceStart> StartRecording(const RecordOptions& options, const RecordPlan& plan, CollectorSet& set,
                                  collect::RingTransport& transport, perfetto::TraceSink& sink,
                                  const model::HostInfo& host, model::ProcessSnapshot processes,
                                  model::SessionInfo& session);

// Drains the rings into the trace, and samples the counters, until the
// duration ends, a stop is requested (then, with a workload, up to
// workload_grace_ns more) or the workload exits, on this thread under
// SCHED_IDLE between turns of pressure (`yield`). Sets session.end_reason;
// an error after data was captured goes to `late_error`.
void RunLoop(const RecordOptions& options, collect::RingTransport& transport, RecordDrain& drain,
             perfetto::TraceSink& sink, CollectorSet& set, int workload_fd, DrainYield& yield,
             model::SessionInfo& session, std::optional<Error>& late_error);

// Closes the gate (session.end_ts), reads the programs' recursion misses,
// detaches the collectors and flushes their last batches and what else the
// kernel side held back on `cpus`; ends `softirq_audit` (may be null) while
// the programs still run. Returns whether the detach was abandoned
// to a stop signal (record_session.h RecordResult::detach_abandoned).
bool StopCollectors(const RecordOptions& options, CollectorSet& set, collect::RingTransport& transport,
                    std::span<collect::BatchFlusher> flushers, std::span<const int> cpus,
                    SoftirqAudit* softirq_audit, model::SessionInfo& session);

}  // namespace gpunoise::record
