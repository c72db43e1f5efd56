// The kernel log of a recording, appended to its trace: every /dev/kmsg
// record logged since the recording started, matched with its
// printk:console tracepoint record (the printk's own time, CPU and task;
// model/kernel_log_match.h), classified, as Perfetto log packets
// (export/perfetto/kernel_log_packets.h) with the loss counted.
#pragma once

#include <memory>
#include <vector>

#include "collect/collector.h"
#include "collect/kmsg_reader.h"
#include "common/result.h"
#include "export/perfetto/trace_file_writer.h"
#include "model/kernel_log_match.h"

namespace gpunoise::collect {
class ConsoleCollector;
}

namespace gpunoise::record {

// Sequence id of the kernel log packets (track events use 1).
inline constexpr uint32_t kKernelLogSequenceId = 7;

// The console half during the recording: its collector starts and stops
// with the session's others (RecordOptions::console) and is drained on
// every turn of the session's loop, so its .bss log only has to hold what
// the kernel prints between two drains.
class ConsoleCapture {
 public:
  void AddCollector(std::vector<std::unique_ptr<collect::Collector>>& collectors);
  void Drain();
  // The collector's entry: messages read and the ones its log overwrote
  // (it has no ring, so the session's ring counts say nothing of it).
  void FillReport(std::vector<model::CollectorReport>& reports) const;
  std::vector<model::ConsoleRecord> Take() { return std::move(records_); }
  bool active() const;
  uint64_t lost() const;

 private:
  collect::ConsoleCollector* collector_ = nullptr;
  std::vector<model::ConsoleRecord> records_;
  uint64_t read_ = 0;
};

// `console` may be null (no collector) or inactive: then only /dev/kmsg.
// `read`, when given, receives the records (for the link events' join).
Status AppendKernelLog(collect::KmsgReader& reader, ConsoleCapture* console, perfetto::TraceFileWriter& out,
                       std::vector<model::KernelLogEntry>* read = nullptr);

}  // namespace gpunoise::record
