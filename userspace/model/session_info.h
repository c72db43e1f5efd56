// What a recording was and how each collector fared: written into the trace
// (DESIGN.md decision 3: loss is data) and read back by the report.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/clock_discipline.h"
#include "model/events.h"

namespace gpunoise::model {

enum class CollectorState {
  kActive,       // every event attached
  kDegraded,     // some events missing; see missing_events
  kDisabled,     // nothing attached; see reason
  kNotRequested,
};
std::string_view CollectorStateName(CollectorState state);

struct CollectorReport {
  std::string name;
  CollectorState state = CollectorState::kNotRequested;
  std::string reason;                       // for kDisabled
  std::vector<std::string> attached_events;  // "sched/sched_switch (tp_btf)"
  std::vector<std::string> missing_events;   // "irq_vectors/local_timer_entry"
  uint64_t events = 0;
  uint64_t lost = 0;
};

// Loss is counted once, at the stage where it happened, with its cause
// (DESIGN.md decision 3). Stages: the kernel (a full ring, a program run the
// kernel skipped, a full aggregate map), user space (a record that failed to
// decode, a record written nowhere because the trace file failed) and the
// GPU side (gpu_recording.h). Only a full ring is ftrace data loss of a CPU's
// event stream (FtraceCpuStats.dropped_events); the rest is gpunoise metadata.
struct CpuLoss {
  uint32_t cpu = 0;
  uint64_t events = 0;    // records read from this CPU's ring
  uint64_t lost = 0;      // records the kernel could not store (ring full): sum of lost_by_kind
  uint64_t bytes = 0;     // record bytes read
  // Ring-full loss by record kind ("sched_switch" -> n), for exact accounting
  // against a counting oracle.
  std::map<std::string, uint64_t> lost_by_kind;
  uint64_t decode_errors = 0;  // records read that failed to decode (skipped)
  uint64_t unwritten = 0;      // records read but not written: the trace file had failed
  std::map<std::string, uint64_t> unwritten_by_kind;
  // sched_switch events the kernel made but never delivered (model/switch_chain.h).
  // Only checked without task filters: a filter removes switches by design.
  uint64_t unseen_switches = 0;
  // Softirqs per vector the kernel counted (/proc/softirqs) and ran without
  // calling its tracepoint (record/softirq_audit.h); zero unless
  // SessionInfo::softirqs_audited.
  SoftirqCounts unreported_softirqs{};
};

// Program runs the kernel skipped (bpf_prog_info.recursion_misses): another
// BPF program was running on that CPU (on classic tracepoints trace_call_bpf
// refuses nested runs and counts them here too). Events lost before any ring.
struct ProgramLoss {
  std::string collector;
  std::string program;  // "gn_sched_switch"
  uint64_t missed = 0;
};

// What an in-kernel map's count in the loss accounting means.
enum class MapLossKind : uint8_t {
  // Updates the map could not take (it was full): the aggregate
  // undercounts, no CPU's event stream lost anything.
  kFull,
  // Records of a per-CPU log (kwork, cpustate, memstall) overwritten before
  // a drain read them: lost, outside the ring's count.
  kOverwritten,
  // Callbacks seen begin without end or end without begin (a program run
  // the kernel skipped, one that straddled the start or end): not written.
  kUnpaired,
};
// "full", "overwritten", "unpaired": the session summary's key and the
// report's JSON.
std::string_view MapLossKindName(MapLossKind kind);

struct MapLoss {
  std::string collector;
  std::string map;  // "gn_samples"
  uint64_t count = 0;  // updates refused, records overwritten or callbacks unpaired, as `kind` says
  MapLossKind kind = MapLossKind::kFull;
};

struct SessionInfo {
  std::string tool_version;
  std::string hostname;
  // What tells this machine's traces from another's when several are
  // merged: a boot_id names one boot of one machine.
  std::string boot_id;
  std::string machine_name;
  std::string command_line;
  uint64_t start_ts = 0;  // CLOCK_BOOTTIME
  uint64_t end_ts = 0;
  std::vector<CollectorReport> collectors;
  std::vector<CpuLoss> cpus;
  uint64_t bpf_recursion_misses = 0;  // program runs the kernel skipped: sum of program_misses
  std::vector<ProgramLoss> program_misses;  // programs with misses only
  std::vector<MapLoss> map_losses;          // maps that were full, logs overwritten, callbacks unpaired
  // Records that came from a CPU outside the recording's CPU set (a CPU
  // brought online during the recording): counted, not decoded.
  uint64_t records_outside_cpus = 0;
  // NET_RX storm sampling (record --netrx-sample; bpf/irq.bpf.c): 1 in
  // how many storm softirqs was timed (0: all were), and how many went
  // untimed, all CPUs (counted exactly; the counter tracks place them).
  uint32_t netrx_sample_every = 0;
  uint64_t netrx_untimed = 0;
  // False when task filters (--pid, --cgroup) were on: then the switch chain
  // has gaps by design and unseen_switches is not measured.
  bool switch_chain_checked = true;
  // Whether the kernel's softirq counts were set against the entry
  // program's (CpuLoss::unreported_softirqs): false without softirq
  // programs or when /proc/softirqs could not be read.
  bool softirqs_audited = false;
  // The recorder's own pace while the gate was open (CLOCK_BOOTTIME): when a
  // drain first found that a ring had lost records (0: never), and the
  // longest time the rings had gone unread before a drain that found new
  // loss, with when it began. Loss after stretches as short as the wakeup
  // mark's is a ring too small for the event rate; after a long one, the
  // recorder (or the VM under it) stalled.
  uint64_t unread_before_loss_ns = 0;
  uint64_t unread_before_loss_from = 0;
  uint64_t first_ring_loss_seen = 0;
  // Whether the drain yielded, under SCHED_IDLE between turns of pressure
  // (record/drain_priority.h), from when, how often it went back to SCHED_OTHER before
  // the end (of those, because a turn was late or a buffer rang), and for how long.
  bool drain_yielded = false;
  uint64_t drain_idle_from = 0;  // when it first went under SCHED_IDLE; 0: never (it starts under SCHED_OTHER)
  uint64_t drain_raises = 0;
  uint64_t drain_raised_for_late = 0;
  uint64_t drain_raised_for_doorbell = 0;  // of the raises, because a ring or log half full rang the doorbell
  uint64_t drain_raised_ns = 0;
  std::string end_reason;  // "duration", "signal SIGINT", "disk full", "write error", ...
  // While recording: the file that holds the data until the end renames it
  // to the output (what is left if the recorder is killed). Not written.
  std::string in_progress_path;
  // The clock discipline when the recording started and ended: how far this
  // machine's REALTIME, which aligns it with other machines, can be trusted.
  ClockDiscipline clock_start;
  ClockDiscipline clock_end;
};

// Every loss of the kernel and user-space stages of one recording, added up.
uint64_t TotalKernelAndUserLoss(const SessionInfo& session);

}  // namespace gpunoise::model
