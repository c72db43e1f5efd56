// What a trace reader hands on while it streams a trace: kernel events in
// the event model, network events, track events, and the metadata around
// them. The reader calls these in file order; events of one CPU arrive in
// time order, CPUs interleave.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/events.h"
#include "model/host_info.h"
#include "model/kernel_log.h"
#include "model/net_trace_event.h"
#include "model/perfetto_stats.h"
#include "model/session_info.h"
#include "model/track_events.h"

namespace gpunoise::model {

class TraceSink {
 public:
  virtual ~TraceSink() = default;

  virtual void OnEvent(const Event& event) = 0;
  virtual void OnNetEvent(const NetTraceEvent& /*event*/) {}

  // The recorder lost events on `cpu` between `from_ts` (0: unknown) and
  // `to_ts` (the first event after the loss).
  virtual void OnCpuLoss(uint32_t /*cpu*/, uint64_t /*from_ts*/, uint64_t /*to_ts*/) {}

  // process_tree: a process (tgid) and its command line's first word.
  virtual void OnProcess(int32_t /*pid*/, int32_t /*ppid*/, std::string_view /*name*/,
                         bool /*is_kthread*/) {}
  virtual void OnThread(int32_t /*tid*/, int32_t /*tgid*/, std::string_view /*name*/) {}
  virtual void OnIrqName(int32_t /*irq*/, std::string_view /*name*/) {}
  virtual void OnHostInfo(const HostInfo& /*host*/) {}
  // Each END_OF_TRACE ftrace_stats, with the deltas from the START before it.
  virtual void OnFtraceStats(const FtraceStatsSummary& /*stats*/) {}
  // The tracing service's stats (a trace from Perfetto's recorder).
  virtual void OnTraceStats(const TraceServiceStats& /*stats*/) {}
  // A packet flagged previous_packet_dropped (not the first of its sequence):
  // its writer lost packets before it. `reasons`: DataLossReason bits.
  virtual void OnPacketLoss(uint32_t /*sequence_id*/, uint32_t /*reasons*/) {}

  // A kernel log record (a log packet of log_id LID_KERNEL), and the
  // records the recorder knows it lost (sequence gaps).
  virtual void OnKernelLog(const KernelLogEntry& /*entry*/) {}
  virtual void OnKernelLogLoss(uint64_t /*lost*/) {}

  virtual void OnTrack(const TrackInfo& /*track*/) {}
  virtual void OnTrackEvent(const TrackEventRecord& /*event*/) {}
};

}  // namespace gpunoise::model
