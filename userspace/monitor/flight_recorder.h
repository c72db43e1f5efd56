// The flight recorder: with --flight-recorder, the sched and irq collectors
// run as in `gpunoise record`, their records go into a bounded in-memory
// ring (record_ring.h) instead of a file, and when a detector starts a
// finding the last N seconds are written as a Perfetto trace into the dump
// directory, by a writer thread so the monitor keeps draining meanwhile.
//
// Dumps are rate-limited (at most one per dump-interval; the caller asks
// once per finding episode) and kept within the directory's quotas
// (dump_store.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "collect/collector.h"
#include "collect/tracepoint_catalog.h"
#include "common/result.h"
#include "model/irq_info.h"
#include "model/process_snapshot.h"
#include "model/session_info.h"
#include "model/kernel_log.h"
#include "monitor/kernel_log_ring.h"
#include "monitor/metrics_builder.h"
#include "monitor/record_ring.h"

namespace gpunoise::collect {
class IrqCollector;
class RingTransport;
}  // namespace gpunoise::collect

namespace gpunoise::monitor {

struct FlightRecorderConfig {
  uint64_t window_ns = 20'000'000'000;
  uint64_t max_bytes = 64ull << 20;
  std::string dump_dir;
  uint32_t max_dumps = 10;
  uint64_t max_dump_bytes = 1ull << 30;
  uint64_t dump_interval_ns = 300'000'000'000;
  std::string command_line;  // for the dumps' metadata
  bool redact = false;       // dumps' process command lines keep only the program's name
  int dump_gid = -1;         // >= 0: dumps are 0640 and of this group
};

struct DumpRequest {
  std::string detector;  // names the file
  std::string title;     // the finding, one line
  std::vector<std::string> evidence;
  uint64_t finding_start = 0;  // CLOCK_BOOTTIME
  uint64_t now = 0;
  // Requested dumps (an alert's window, the same on every node it reaches):
  // nothing before this instant (CLOCK_BOOTTIME; 0: the whole window), and
  // the file named by `file_tag` instead of the detector.
  uint64_t window_start = 0;
  std::string file_tag;
  model::IrqTable irqs;
};

enum class DumpOutcome { kStarted, kRateLimited, kBusy, kFailed };
std::string_view DumpOutcomeName(DumpOutcome outcome);  // "started", "rate_limited", "busy", "failed"

class FlightRecorder {
 public:
  // Starts the collectors on rings for every possible CPU (so CPUs that
  // come online later are covered). Fails when the dump directory cannot be
  // used or no collector starts.
  static Result<std::unique_ptr<FlightRecorder>> Start(const FlightRecorderConfig& config,
                                                       const collect::TracepointCatalog& catalog,
                                                       collect::AttachMode attach_mode);
  FlightRecorder() = default;  // for Start() only
  ~FlightRecorder();  // detaches, waits for a dump in progress
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // Readable when a ring crossed its wakeup mark: call Drain soon.
  int wait_fd() const;
  // Moves every record from the kernel rings into the ring, then drops
  // what is older than the window.
  Status Drain(uint64_t now);

  // The kernel log the monitor read (in the order read), with the records
  // the kernel lost just before them: kept for the dumps beside the events
  // (kernel_log_ring.h), at most kKernelLogRecords / kKernelLogBytes.
  void AddKernelLog(std::vector<model::KernelLogEntry> entries, uint64_t lost_before, uint64_t now);
  static constexpr size_t kKernelLogRecords = 8192;
  static constexpr uint64_t kKernelLogBytes = 2ull << 20;

  DumpOutcome RequestDump(DumpRequest request);
  // Quotas, rate limit and window; a new memory size starts a fresh ring.
  void Reconfigure(const FlightRecorderConfig& config);
  // Waits for a dump in progress (tests, shutdown).
  void WaitForDump();

  FlightRecorderStats Stats() const;
  std::vector<model::CollectorReport> reports() const;
  uint64_t dumps_written() const { return written_.load(); }
  std::string last_dump_path() const;

 private:
  void WriteDump(RecordRing snapshot, std::optional<KernelLogRing> log, DumpRequest request, std::string path,
                 int gid);
  model::ProcessSnapshot ScanProcesses() const;
  void CountOutcome(const std::string& result, uint64_t deleted);

  FlightRecorderConfig config_;
  std::unique_ptr<collect::RingTransport> transport_;
  std::vector<std::unique_ptr<collect::Collector>> collectors_;
  collect::IrqCollector* irq_ = nullptr;
  std::unique_ptr<RecordRing> ring_;
  KernelLogRing kernel_log_{kKernelLogRecords, kKernelLogBytes, 0};
  bool kernel_log_fed_ = false;  // the monitor reads the kernel log (a dump says so even when nothing was logged)
  std::vector<uint64_t> lost_seen_;  // per CPU
  uint64_t lost_total_ = 0;
  uint64_t last_dump_ts_ = 0;
  bool dumped_once_ = false;

  std::thread writer_;
  std::atomic<bool> writing_{false};
  std::atomic<uint64_t> written_{0};
  mutable std::mutex stats_mu_;
  std::map<std::string, uint64_t> outcomes_;
  uint64_t deleted_ = 0;
  std::string last_path_;
};

}  // namespace gpunoise::monitor
