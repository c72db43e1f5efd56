// The node part of a recording: every interval, per-CPU steal time from
// /proc/stat and the throttling counters (cpu.stat) of every cgroup that has
// a CPU quota, as counter tracks; every second (and at the ends) which
// processes those quotas apply to and every thread's CPU affinity; at the
// start the NUMA topology, at both ends the NIC IRQs' CPUs. No eBPF:
// files only, so the cost is a few reads per interval (one per quota cgroup)
// and one sched_getaffinity per thread a second.
#pragma once

#include <cstdint>
#include <map>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collect/collector.h"
#include "collect/kallsyms_loader.h"
#include "collect/kernel_health.h"
#include "collect/node_counters.h"
#include "common/background_task.h"
#include "common/files.h"
#include "common/result.h"
#include "model/kernel_work.h"
#include "model/node_counters.h"
#include "record/buffer_fill.h"
#include "record/cpustate_recording.h"
#include "record/thread_names.h"

namespace gpunoise::collect {
class KworkCollector;
class MemstallCollector;
}

namespace gpunoise::perfetto {
class TraceSink;
}

namespace gpunoise::record {

// Time until the next rescan of quotas and thread affinities, given what
// the last one cost in CPU: once a second, and never more than 1% of a CPU.
// The scan is one syscall per thread: 1.2 ms for 94 threads on this VM, so
// a node with thousands of threads would otherwise spend several percent.
uint64_t NextRescanGapNs(uint64_t scan_cpu_ns);

// Time until the next read of /proc/stat (per-CPU steal), given the node
// sample interval and what the last read cost in CPU: every sample, and
// never more than 0.1% of a CPU. The kernel builds the whole file for any
// read, a line per CPU and a count per interrupt: 7 us on this 2-CPU VM, and
// a read grows with the CPUs and interrupts a node has.
uint64_t NextProcStatGapNs(uint64_t interval_ns, uint64_t read_cpu_ns);

// When to read the kernel-work and CPU-state logs next: `most` entries came
// to the busiest CPU's log (of `capacity`) in the `elapsed_ns` since the last
// read, so at that rate the next read comes when a quarter of it has filled,
// within [shortest, longest]. From the rate in one step: an IPI storm that
// starts while the logs are read every 100 ms fills one in 30 ms, and a
// cadence that halved per read lost the three reads' worth in between.
uint64_t NextLogReadGapNs(uint64_t elapsed_ns, uint64_t most, uint64_t capacity, uint64_t shortest,
                          uint64_t longest);

class NodeRecording {
 public:
  // Creates the memstall collector (reclaim and compaction stalls) and the
  // kwork collector (IPIs, work items, hrtimers) and appends them to
  // `collectors` (the session starts, stops and reports it).
  // The cpustate collector too (idle periods only when `idle`: power:cpu_idle
  // is the frequent one; record/cpustate_recording.h).
  NodeRecording(uint64_t interval_ns, std::vector<std::unique_ptr<collect::Collector>>& collectors,
                bool idle = true);

  // Kernel-work callbacks are named from `symbols` (null: not named).
  Status Begin(perfetto::TraceSink& sink, std::shared_ptr<collect::KernelSymbolsLoader> symbols);
  // Writes a sample when the interval has passed; returns ns until the next.
  Result<uint64_t> MaybeSample(perfetto::TraceSink& sink, uint64_t now);
  // What the in-kernel logs (kernel work, CPU state, in kernel-work
  // entries) held and took in since the last call, for the drain's
  // priority (record/drain_priority.h).
  BufferFill TakeLogFill();
  // A log overwrote entries since the last call.
  bool TakeNewLogLoss();
  // A log rang the doorbell: the next sample reads the logs.
  void ReadLogsNow() { next_work_drain_ = 0; }
  // At the end of the recording (before the collectors detach).
  void Freeze();
  Status Finish(perfetto::TraceSink& sink);

  // The memstall collector's entry: its stalls and the ones its log lost
  // (it has no ring, so the session's ring counts say nothing of it).
  void FillReport(std::vector<model::CollectorReport>& reports) const;

  // "node: 1 cgroup with a CPU quota (throttled 38 times), steal 0 ns"
  std::string Summary() const;

  // What one background scan found (record/node_recording.cc, ScanNode).
  struct NodeScan {
    uint64_t ts = 0, cpu_ns = 0;
    std::vector<collect::QuotaCgroup> quotas;
    std::vector<std::vector<int32_t>> quota_processes;  // by quota
    std::map<std::string, model::CgroupCpuStat> first_stats;  // the first scan's, by path
    std::map<int32_t, std::vector<int>> affinities;
    bool adopted = false;
  };

 private:
  // A sample of the counters; /proc/stat only when due, or with `all` (the
  // baseline and the end, whose steal totals must be exact).
  model::NodeSnapshot Read(bool all);
  // Starts a scan of quota cgroups and thread affinities in the background
  // unless one is in flight; with `wait` (the end), finishes the one in
  // flight, then a new one.
  Status Rescan(perfetto::TraceSink& sink, uint64_t ts, bool wait = false);
  // Writes a finished scan (with `wait`, waits for the one in flight) and
  // schedules the next from what it cost.
  Status CollectScan(perfetto::TraceSink& sink, bool wait);
  // Takes a scan's quota list, and the first scan's counters as the
  // baseline of the cgroups it found (once per scan).
  void AdoptScan(NodeScan& scan);
  Status WriteStalls(perfetto::TraceSink& sink);
  Status WriteKernelWork(perfetto::TraceSink& sink);
  const std::string& Symbol(const collect::KernelSymbols& symbols, uint64_t address);

  uint64_t interval_ns_;
  uint64_t ns_per_tick_;
  // Read every sample: opened once (common/files.h RereadableFile).
  RereadableFile proc_stat_{"/proc/stat"};
  uint64_t next_proc_stat_ = 0;  // CLOCK_BOOTTIME
  collect::KernelHealthReader kernel_health_;
  collect::CpuCgroupMounts mounts_;
  std::vector<collect::QuotaCgroup> quotas_;
  model::NodeSnapshot baseline_, previous_, final_;
  uint64_t next_rescan_ = 0;
  // Scans run in the background: every thread's affinity is one syscall a
  // thread (107 ms for 20k threads inside a UDP flood) and the quota walk
  // reads every cgroup (56-66 ms for 2000); on the drain thread the first
  // lost 47k-167k records at the start of a recording.
  std::optional<BackgroundTask<NodeScan>> scan_;
  bool scanned_once_ = false;
  bool frozen_ = false;
  collect::MemstallCollector* memstall_ = nullptr;
  std::vector<model::MemStall> stalls_;  // reused
  ThreadNames threads_;
  uint64_t stall_count_ = 0, stall_ns_ = 0;
  collect::KworkCollector* kwork_ = nullptr;
  std::vector<model::KernelWork> work_;  // reused
  std::array<uint64_t, 4> work_count_{};  // by model::KernelWorkKind
  // The logs are drained on a cadence of their own (NextLogReadGapNs): an
  // IPI storm can send 30k a second from one CPU.
  uint64_t work_interval_ns_ = 0, next_work_drain_ = 0, last_log_read_ = 0;
  BufferFill log_fill_;  // since the last TakeLogFill()
  uint64_t log_lost_seen_ = 0;
  // Kernel work is written once the symbols are read (until then it waits
  // in work_), except at the end, which waits for them.
  std::shared_ptr<collect::KernelSymbolsLoader> symbols_;
  collect::KernelSymbols no_symbols_;  // without a table: addresses stay hex
  std::map<uint64_t, std::string> symbol_names_;
  inline static const std::pair<int32_t, std::string> kNobody{0, ""};
  std::unique_ptr<CpustateRecording> cpustate_;  // drained on the kwork cadence
};

}  // namespace gpunoise::record
