// The kernel log of a recording, appended to its trace: every /dev/kmsg
// record logged since the recording started, matched with its
// printk:console tracepoint record (the printk's own time, CPU and task;
// model/kernel_log_match.h), classified, as Perfetto log packets
// (export/perfetto/kernel_log_packets.h) with the loss counted.
//
// Both halves are read on every turn of the session's loop and matched as
// they come (model::KernelLogMatcher); what is final is written into the
// trace then, so the recorder holds about three matching windows (3 s) of
// the log, not the whole recording's.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "collect/collector.h"
#include "collect/kmsg_reader.h"
#include "common/result.h"
#include "export/perfetto/kernel_log_packets.h"
#include "export/perfetto/trace_file_writer.h"
#include "model/kernel_log_match.h"

namespace gpunoise::collect {
class ConsoleCollector;
}

namespace gpunoise::record {

// Sequence id of the kernel log packets (export/perfetto/kernel_log_packets.h).
using perfetto::kKernelLogSequenceId;

// Records kept for joining link events to their kernel lines at the end
// (model/link_kernel_log.h): the newest this many; older ones are in the
// trace but not joined (counted in the summary line).
inline constexpr size_t kKernelLogJoinKeep = 16384;

// The kernel log during the recording: the console collector starts and
// stops with the session's others (RecordOptions::console); Drain() runs on
// every turn of the session's loop, so the collector's .bss log only has to
// hold what the kernel prints between two drains.
class ConsoleCapture {
 public:
  void AddCollector(std::vector<std::unique_ptr<collect::Collector>>& collectors);
  // The /dev/kmsg half, from when the recording started (none: no kernel
  // log is recorded, and console records are only counted).
  void set_kmsg(collect::KmsgReader* reader) { kmsg_ = reader; }
  // Reads both halves, matches them and writes what is final into `out`.
  Status Drain(perfetto::TraceFileWriter& out);
  // The collector's entry: messages read and the ones its log overwrote
  // (it has no ring, so the session's ring counts say nothing of it).
  void FillReport(std::vector<model::CollectorReport>& reports) const;
  bool active() const;
  uint64_t lost() const;

  // The end (after the collectors stopped): the rest, the loss and the
  // summary line; the records kept for the link events' join go to `read`.
  Status Finish(perfetto::TraceFileWriter& out, std::vector<model::KernelLogEntry>* read);

  // Records the matcher holds now, the most it held (for tests).
  size_t held() const { return matcher_.held(); }
  size_t most_held() const { return most_held_; }

 private:
  Status Write(perfetto::TraceFileWriter& out, std::vector<model::KernelLogEntry> entries, bool last);

  collect::ConsoleCollector* collector_ = nullptr;
  collect::KmsgReader* kmsg_ = nullptr;
  model::KernelLogMatcher matcher_{model::kKernelLogMatchWindowNs};
  std::vector<model::ConsoleRecord> records_;  // reused between drains
  std::deque<model::KernelLogEntry> kept_;     // for the join, the newest kKernelLogJoinKeep
  uint64_t read_ = 0, written_ = 0, classified_ = 0, not_joined_ = 0, not_written_ = 0;
  size_t most_held_ = 0;
};

// `console` may be inactive (no printk:console): then only /dev/kmsg.
// Finishes the capture (ConsoleCapture::Finish); `read`, when given,
// receives the records kept for the link events' join.
Status AppendKernelLog(collect::KmsgReader& reader, ConsoleCapture& console, perfetto::TraceFileWriter& out,
                       std::vector<model::KernelLogEntry>* read = nullptr);

}  // namespace gpunoise::record
