// `gpunoise record`: probe the system, start the requested collectors, drain
// their rings into a Perfetto trace until the duration ends or a stop is
// requested, and write the closing metadata. RunRecord runs the stages in
// order: prepare_collectors.h (plan, build, attach), run_loop.h (start,
// loop, stop) with drain.h, loss_accounting.h, finish.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collect/collector.h"
#include "collect/irq_collector.h"
#include "collect/net_collector.h"

#include "export/perfetto/trace_file_writer.h"
#include "common/result.h"
#include "model/kernel_log.h"
#include "model/session_info.h"

namespace gpunoise::model {
class PidNsMap;
}

namespace gpunoise::record {

class ConsoleCapture;

// Event groups `--events` accepts. "net" keeps per-device, per-queue and
// per-CPU counters in the kernel (cheap, on by default); "net-packets" adds a
// record per packet, poll and drop (costly at high packet rates).
// "node": steal time and CPU-quota throttling counters from /proc and the
// cgroup file systems (record/node_recording.h), no eBPF.
inline constexpr std::string_view kEventGroups[] = {"sched", "irq", "softirq", "net",
                                                    "net-packets", "node"};
inline constexpr std::string_view kDefaultEventGroups = "sched,irq,softirq,net,node";

// Which collectors' records reach the rings in per-CPU batches
// (bpf/batch.bpf.h), one ring reservation per batch; each drain first
// flushes every CPU whose batch holds records and did not fill since the
// last drain. The irq collector's records stay direct by default: there
// each softirq's entry waits for its exit and both go as one record
// (docs/record.md), which a NET_RX flood pays for less than two batched
// records (docs/performance.md, "A busy mark instead of atomics").
enum class BatchMode {
  kNone,   // --no-batching: one ring reservation per record
  kSched,  // switches and wakeups (the default)
  kAll,    // --batching: also irq handlers, softirqs and system vectors
};

struct RecordOptions {
  std::string output_path;
  uint64_t duration_ns = 0;  // 0: until stop_fd becomes readable
  // --start-at: the gate opens (data starts) at this REALTIME instant, once
  // every collector is attached; 0: as soon as they are. The duration counts
  // from then.
  int64_t start_at_realtime_ns = 0;
  std::set<std::string> event_groups = {"sched", "irq", "softirq", "net", "node"};
  collect::FilterOptions filters;
  // --net-dev, --nic-tracepoints (NetOptions::packets follows "net-packets").
  collect::NetOptions net;
  // How often the network counters become counter-track samples.
  uint64_t net_interval_ms = 100;
  // How often the NICs' own counters are (ethtool -S, standard groups,
  // queue stats, link settings): each read takes the rtnl lock, and some
  // drivers ask their firmware, so not at the kernel counters' pace.
  uint64_t nic_interval_ms = 1000;
  uint64_t ring_bytes_per_cpu = 0;  // 0: choose from the CPU count
  uint64_t drain_interval_ms = 100;
  // --drain-priority idle: the drain runs under SCHED_IDLE between turns of
  // pressure (record/drain_priority.h); false (normal): never.
  bool drain_yield = true;
  // At most this many records per CPU between two writes: the staging stays
  // small and cache-warm, and a ring a storm refills as fast as it is read
  // cannot hold the drain (and the stop deadline) forever. 0: unbounded.
  uint64_t records_per_cpu_per_drain = 1 << 14;
  collect::AttachMode attach_mode = collect::AttachMode::kPreferBtf;
  BatchMode batching = BatchMode::kSched;
  // --netrx-sample: past 8 NET_RX softirqs in one jiffy on a CPU (a storm),
  // time only 1 in this many of the rest and count the others
  // (bpf/irq.bpf.c, "NET_RX storms are sampled"). 0: time every softirq.
  uint32_t netrx_sample_every = collect::kDefaultNetRxSampleEvery;
  // zlib blocks: files about 5x smaller for a few % of the recorder's CPU
  // (docs/record.md, "Compression").
  perfetto::TraceCompression compression = perfetto::TraceCompression::kZlib;
  // `--compress auto` (the default): a block is deflated only while the node
  // has CPU to spare (record/spare_cpu.h), else written plain.
  bool compress_with_spare_cpu_only = true;
  // `--deflate-thread`: compressed blocks are deflated and written on a
  // thread of their own, beside the drain (perfetto::TraceFileWriter::
  // DeflateInBackground); it follows the drain's scheduling policy.
  bool deflate_in_background = false;
  // `--drain-threads`: the drain reads the rings and encodes on this many
  // threads, itself one of them (record/drain_lanes.h); 1: itself alone.
  size_t drain_lanes = 1;
  std::string command_line;
  // --redact: processes' command lines keep only the program's name.
  bool redact = false;
  // --kubelet-log-dir: the kubelet's pods/ and containers/ (pod and
  // container names, collect/kubelet_pods.h).
  std::string kubelet_log_dir = "/var/log";
  // --machine-name: how this machine is labelled when traces of several
  // are merged. Empty: the hostname.
  std::string machine_name;
  // Readable (signalfd, eventfd, pipe) = stop recording now. -1: none.
  int stop_fd = -1;
  // Name of the signal behind stop_fd, for the summary ("SIGINT").
  std::function<std::string()> stop_reason;
  // Called once every collector is attached and the trace header is written.
  std::function<void(const model::SessionInfo&)> on_started;

  // `-- CMD`: called right after on_started; starts the workload and
  // returns a descriptor that becomes readable when it has exited (a
  // pidfd), which ends the recording. An error aborts the recording.
  std::function<Result<int>()> start_workload;
  // Runs once everything is attached and the workload started: where the
  // capabilities no longer needed are dropped (common/privilege_drop.h).
  std::function<Status()> after_attach;
  // >= 0: the trace is 0640 and of this group (--group), not 0600.
  int trace_gid = -1;
  // Why the workload ended, for the summary ("command exited with status 0").
  std::function<std::string()> workload_end_reason;
  // On a stop signal, how long to keep recording while the workload is
  // still running: Ctrl-C in a terminal reaches it too, and its last GPU
  // data is written as it exits.
  uint64_t workload_grace_ns = 3000000000ull;
  // After the kernel side's closing metadata, before the file is
  // committed: appends more packets (GPU fragments, NVML counters).
  std::function<Status(perfetto::TraceFileWriter&, const model::SessionInfo&)> append_extra;
  // When set, learns from /proc and the fork/exit records which host task
  // has which ids inside pid namespaces (for the GPU fragments of
  // containerized jobs); filled by the time append_extra runs.
  model::PidNsMap* pid_ns_map = nullptr;
  // When set, append_extra fills it with the kernel log records of the
  // recording; the link events then get the lines naming their device
  // (model/link_kernel_log.h), written beside them.
  const std::vector<model::KernelLogEntry>* kernel_log = nullptr;
  // When set, the printk:console collector runs with the others and its
  // records are drained into it (record/kernel_log_recording.h).
  ConsoleCapture* console = nullptr;
};

struct RecordResult {
  model::SessionInfo session;
  std::string path;
  uint64_t bytes_written = 0;
  // The packets before compression (equal to bytes_written when none).
  uint64_t packet_bytes = 0;
  perfetto::TraceCompression compression = perfetto::TraceCompression::kNone;
  // Compressed blocks sealed, and of them those written plain (no spare CPU).
  uint64_t blocks_sealed = 0, blocks_plain = 0;
  uint64_t parse_errors = 0;
  // One line on the network counters ("" when net was not recorded).
  std::string net_summary;
  std::string node_summary;  // record/node_recording.h Summary()
  // Set when the recording ended because of an error after data was
  // captured (disk full): the file holds what was captured, and the command
  // exits non-zero with this message.
  std::optional<Error> late_error;
  // A stop signal came while the programs were detaching: the trace is
  // complete, the detach goes on in a thread, and the caller should exit
  // without freeing what it used (std::_Exit after its last output).
  bool detach_abandoned = false;
};

// Errors before anything was captured (no privileges, no BTF, bad output
// path, no collector could start) are returned as Error; nothing is written.
Result<RecordResult> RunRecord(const RecordOptions& options);

// One line: events per collector, lost events, bytes, duration.
std::string FormatSummary(const RecordResult& result);

// Default per-CPU ring size: 4 MiB per CPU, at most 256 MiB in all.
uint64_t DefaultRingBytesPerCpu(size_t ncpus);

}  // namespace gpunoise::record
