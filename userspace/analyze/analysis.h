// The report's analysis: pick the window and the focus threads, run every
// detector, rank the findings, and compute the summary tables (per-CPU
// shares, the focus threads' worst run-queue delays, per-device network
// figures, lost events). Pure: everything comes from the Timeline.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/attribution.h"
#include "analyze/cpu_state_data.h"
#include "analyze/finding.h"
#include "analyze/focus.h"
#include "analyze/thresholds.h"
#include "analyze/timeline.h"
#include "common/result.h"

namespace gpunoise::analyze {

struct AnalysisOptions {
  Thresholds thresholds;
  std::vector<std::string> focus;  // --focus items
  CgroupResolver cgroups;
  // --window, as offsets from the first event (ns); unset: the whole trace.
  std::optional<uint64_t> window_start;
  std::optional<uint64_t> window_end;
  size_t top_delays = 10;
};

struct CpuShare {
  uint32_t cpu = 0;
  uint64_t observed_ns = 0;  // time within the window this CPU has data for
  uint64_t busy_ns = 0;      // not idle (tasks and interrupts)
  uint64_t irq_ns = 0;
  uint64_t softirq_ns = 0;
  uint64_t focus_ns = 0;     // focus threads running
  uint64_t switches = 0;
  uint64_t lost_spans = 0;
  // Node noise (record's "node" group): hypervisor steal on this CPU, and
  // focus-thread waits in this CPU's run queue that a CPU quota explains.
  uint64_t steal_ns = 0;
  uint64_t throttled_ns = 0;
  uint64_t reclaim_ns = 0;  // focus threads stalled in reclaim/compaction, by the CPU they were on
  bool steal_recorded = false;  // false: the trace has no steal data
};

struct FocusThreadSummary {
  int32_t tid = 0;
  std::string name;  // DescribeThread
  uint64_t observed_ns = 0, run_ns = 0, wait_ns = 0, interrupted_ns = 0;
  std::vector<uint32_t> cpus;
};

struct DelayCulprit {
  std::string who;
  std::string kind;
  uint64_t ns = 0;
};
struct RunQueueDelay {
  int32_t tid = 0;
  std::string thread;
  uint32_t cpu = 0;
  uint64_t start = 0, end = 0;
  bool after_preemption = false;
  std::vector<DelayCulprit> ran_instead;  // largest first
};

struct DeviceStats {
  std::string device;
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
  uint64_t napi_polls = 0, full_budget_polls = 0, drops = 0, tx_timeouts = 0, dql_stalls = 0;
  // Packets NAPI polls processed: the RX side where rx_packets was not counted.
  uint64_t napi_packets = 0;
  // False: rx and tx packets and bytes were not counted for this device (a
  // device in another network namespace than the recorder's, its packets
  // taken from device statistics): unknown, not zero.
  bool packets_counted = true;
  std::map<std::string, uint64_t> drops_by_reason;
  std::vector<int32_t> irqs;
  uint64_t irq_count = 0, irq_ns = 0;
  // The NIC's own counters (ethtool -S, standard groups) and link events.
  bool nic_counters = false;  // the recording read them for this device
  std::string driver;
  uint64_t nic_drops = 0, pause_frames = 0;
  uint32_t carrier_changes = 0, link_downs = 0;
  std::map<std::string, uint64_t> nic_by_kind;  // model::NicCounterKindName -> rise
};

struct CpuLossRow {
  uint32_t cpu = 0;
  // Events the kernel ring lost: full (gpunoise session summary), or
  // overwritten + dropped + commit overrun (ftrace_stats, END - START).
  uint64_t lost = 0;
  std::map<std::string, uint64_t> lost_by_kind;  // gpunoise: "sched_switch" -> n
  uint64_t overwritten = 0, dropped = 0, commit_overrun = 0;  // ftrace_stats deltas
  uint64_t decode_errors = 0;  // gpunoise: records read that failed to decode
  uint64_t unwritten = 0;      // gpunoise: records read, not written (the trace file had failed)
  // Switches missing from the chain: the kernel never delivered them
  // (session summary) or breaks the analysis saw; 0 when not checked.
  uint64_t unseen_switches = 0;
  // Softirqs per vector the kernel ran without calling its tracepoint
  // (gpunoise session summary; 0 unless LossSummary::softirqs_audited).
  model::SoftirqCounts unreported_softirqs{};
  uint64_t loss_spans = 0;  // bundles marked lost_events
};

// Loss by stage and cause (DESIGN.md decision 3). For a gpunoise trace the
// figures are the session summary's and total_lost equals
// model::TotalKernelAndUserLoss, the number `record` printed; for a trace
// from Perfetto's recorder they are its own stats.
struct LossSummary {
  std::string source;  // what the figures come from; "none: ..." when nothing
  uint64_t total_lost = 0;  // events: kernel ring + program runs skipped + user space (+ kretprobe misses)
  uint64_t kernel_ring_full = 0;  // sum of cpus[].lost
  uint64_t bpf_recursion_misses = 0;  // program runs the kernel skipped
  std::vector<model::ProgramLoss> programs;
  // In-kernel map losses by kind: full aggregate maps (they undercount, no
  // event stream lost anything), overwritten log records, unpaired
  // callbacks; never part of total_lost.
  std::vector<model::MapLoss> map_losses;
  uint64_t decode_errors = 0, unwritten = 0, records_outside_cpus = 0;  // user space
  uint64_t kprobe_misses = 0;  // ftrace_stats: kretprobe misses during the trace
  bool switch_chain_checked = true;  // false: a task filter was on, chain gaps are by design
  bool unseen_from_session = false;  // unseen switches are the recorder's check, not the analysis'
  uint64_t total_unseen_switches = 0;
  // The recorder set the kernel's softirq counts against its entry
  // program's runs; what the kernel ran without reporting, per vector, all
  // CPUs (not part of total_lost: nothing the recorder was given was lost).
  bool softirqs_audited = false;
  model::SoftirqCounts unreported_softirqs{};
  uint64_t total_unreported_softirqs = 0;
  uint64_t slices_trimmed = 0;  // CPU slices cut where they overlapped (a damaged trace)
  // NET_RX storms the recorder sampled (record --netrx-sample): 1 in how
  // many was timed (0: none sampled, or not said), how many ran untimed
  // (counted, not lost), and how many of those the timeline holds as
  // estimated slices (analyze/untimed_softirqs.h).
  uint32_t netrx_sample_every = 0;
  uint64_t netrx_untimed = 0, netrx_untimed_placed = 0;
  // gpunoise: when the recorder first found a ring short (0: never), and the
  // longest it had left the rings unread before a drain that found new loss
  // (from: CLOCK_BOOTTIME), against when the recording began.
  uint64_t recording_start = 0;
  uint64_t unread_before_loss_ns = 0, unread_before_loss_from = 0, first_ring_loss_seen = 0;
  std::string end_reason;             // how the recording ended; empty: not said
  std::optional<model::GpuLoss> gpu;  // gpunoise's GPU collection summary
  // Perfetto's own fields, for traces from its recorder.
  std::optional<model::FtraceStatsSummary> ftrace;
  std::optional<model::TraceServiceStats> service;
  model::PacketLoss packet_loss;
  std::vector<CpuLossRow> cpus;
  std::vector<model::CollectorReport> collectors;
  std::vector<std::string> reader_problems;  // corruption met in --partial mode
  // False when every recording behind the analysis that names `collector`
  // did not run it (its tracepoint missing on that kernel): what it counts
  // is unknown, not zero. Where reports of several recordings meet, one that
  // ran is enough. A recording that lists collectors but not this one did
  // not run it; a trace that lists no collectors at all is taken as counted.
  // With `event` (a tracepoint's name), the collector must also have had
  // that one attached (a newer kernel's tracepoint, say).
  bool Counted(std::string_view collector, std::string_view event = {}) const;
  // Whether the recording asked for `collector`, whatever became of it
  // (a trace that lists no collectors at all: taken as asked).
  bool Listed(std::string_view collector) const;
  // The kernel log (record's /dev/kmsg and printk:console halves,
  // model/kernel_log_match.h): messages, not ring events, so never part of
  // total_lost.
  struct KernelLog {
    uint64_t messages = 0;
    uint64_t with_caller = 0;          // matched: the printk's time, CPU and task
    uint64_t kmsg_gaps = 0;            // sequence numbers /dev/kmsg's ring overwrote before they were read
    uint64_t kmsg_only = 0;            // no console record matched (estimated time, no caller)
    uint64_t console_only = 0;         // no kmsg record matched (no level, sequence number, DEVICE=)
    uint64_t console_overwritten = 0;  // the console collector's log lapped before a drain
    bool console = false;              // a printk:console collector ran
  } kernel_log;
};

struct Analysis {
  uint64_t trace_start = 0, trace_end = 0;  // first and last event
  uint64_t from = 0, to = 0;                // analysis window
  std::string hostname, kernel;
  std::string recorder;  // "gpunoise 0.1.0" or "unknown (no gpunoise session summary)"
  uint32_t num_cpus = 0;
  bool has_network_data = false, has_gpu_data = false;
  FocusSelection focus;
  std::vector<FocusThreadSummary> focus_threads;
  uint64_t recorder_cost_ns = 0;  // focus-thread time gpunoise's own threads took
  std::vector<Finding> findings;  // ranked
  std::vector<NotMeasurable> not_measurable;  // "not measurable on this node"
  std::vector<CpuShare> cpus;
  std::vector<RunQueueDelay> top_delays;
  std::vector<DeviceStats> devices;
  LossSummary loss;
  Thresholds thresholds;
};

Result<Analysis> Analyze(const Timeline& t, const AnalysisOptions& options);

// The context every detector reads for [from, to) of `t`, as Analyze builds
// it (the focus threads it selected returned); the monitor's replay of a
// recording (interval_replay.h) starts from the same one. `thresholds` must
// outlive `ctx`.
struct AnalysisContext;
Result<FocusSelection> BuildAnalysisContext(const Timeline& t, const AnalysisOptions& options,
                                            const Thresholds* thresholds, uint64_t from, uint64_t to,
                                            AnalysisContext* ctx);

}  // namespace gpunoise::analyze
