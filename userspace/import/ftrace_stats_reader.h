// Reads FtraceStats packets the way the trace processor's stats table does:
// every FtraceCpuStats field at START_OF_TRACE and at END_OF_TRACE, and per
// CPU the difference END - START (ftrace_cpu_overrun_delta,
// ftrace_cpu_dropped_events_delta, ftrace_cpu_commit_overrun_delta, ...).
// Each END phase is handed on with the deltas from the latest START.
#pragma once

#include <cstdint>
#include <map>

#include "import/packet_error.h"
#include "common/proto_wire_reader.h"
#include "model/trace_sink.h"

namespace gpunoise::import {

// The kernel's per-CPU ring counters as one FtraceCpuStats gives them.
struct FtraceCpuCounters {
  uint64_t entries = 0, overrun = 0, commit_overrun = 0, bytes = 0;
  uint64_t dropped_events = 0, read_events = 0;
  double oldest_event_ts = 0, now_ts = 0;
};

class FtraceStatsReader {
 public:
  bool Decode(const ProtoField& field, model::TraceSink& sink, PacketError* error);

 private:
  std::map<uint32_t, FtraceCpuCounters> start_;  // the latest START, per CPU
  model::FtraceStatsSummary errors_;             // setup and parse errors of every phase so far
  int64_t kprobe_misses_start_ = 0;
  bool has_kprobe_start_ = false;
};

}  // namespace gpunoise::import
