// What the detectors look at: per-CPU timelines of who ran (run slices) and
// of hard and soft interrupts, wakeups, migrations, thread and process
// names, network events and track data (GPU work, counters), built from a
// stream of model events. Each kept item is a small fixed-size record, so
// memory is a small multiple of the events kept (~24 bytes per slice).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyze/pod_vector.h"
#include "model/kernel_log.h"
#include "model/kernel_work.h"
#include "model/gpu_loss.h"
#include "model/process_identity.h"
#include "model/host_info.h"
#include "model/perfetto_stats.h"
#include "model/session_info.h"
#include "model/track_events.h"
#include "model/track_identity.h"

namespace gpunoise::analyze {

// RunSlice::end_state values beyond the kernel's prev_state encoding.
inline constexpr int32_t kStateUnknown = -1;       // the slice's end was inferred (loss, chain break)
inline constexpr int32_t kStateStillRunning = -2;  // running when the data ends

// prev_state as sched_switch reports it (Linux >= 4.14: one bit per state,
// TASK_REPORT_MAX for preemption). Runnable: no sleeping state bit set.
bool IsRunnableState(int32_t state);
bool IsPreemptedState(int32_t state);
std::string_view StateName(int32_t state);  // "R+", "R", "S", "D", ...

struct RunSlice {
  uint64_t start = 0;
  uint64_t end = 0;
  int32_t tid = 0;        // 0: the CPU was idle
  int32_t end_state = 0;  // prev_state of the switch that ended it
};

// Hard IRQs carry their IRQ number; x86 system vectors (local timer, IPIs)
// carry -1 - VectorKind. Softirqs carry their vector number.
struct IntrSlice {
  uint64_t start = 0;
  uint64_t end = 0;
  int32_t id = 0;
  int32_t tid = 0;  // the task it interrupted (0: idle)
};
int32_t VectorIrqId(uint32_t vector_kind);

struct Wakeup {
  uint64_t ts = 0;
  int32_t tid = 0;
  int16_t target_cpu = -1;
  uint16_t waker_cpu = 0;
  // The task current on waker_cpu (0: unknown or idle) and the context the
  // wakeup fired in (model::kFlag*): from a softirq or hard IRQ the waker
  // is the interrupt, not the task it interrupted.
  int32_t waker_tid = 0;
  uint16_t flags = 0;
};

struct Migration {
  uint64_t ts = 0;
  int32_t tid = 0;
  int32_t orig_cpu = 0;
  int32_t dest_cpu = 0;
};

struct LossSpan {
  uint64_t from = 0;  // 0: since the start of the data
  uint64_t to = 0;
};

// NET_RX softirqs the recorder counted without timing them (storm
// sampling) that analyze/untimed_softirqs.h placed as estimated slices in
// [from, to): `count` of them, `placed` of which fit.
struct UntimedSpan {
  uint64_t from = 0, to = 0;
  uint64_t count = 0;
  uint64_t placed = 0;
};

struct CpuTimeline {
  PodVector<RunSlice> runs;  // sorted, non-overlapping
  PodVector<IntrSlice> hardirqs;
  // With estimated NET_RX slices where the recorder sampled a storm
  // (`untimed` says where).
  PodVector<IntrSlice> softirqs;
  std::vector<UntimedSpan> untimed;  // in time order
  std::vector<LossSpan> losses;
  uint64_t first_ts = 0;  // 0: no events on this CPU
  uint64_t last_ts = 0;
  uint64_t chain_breaks = 0;  // switches whose prev was not the task we knew to be current
  uint64_t slices_trimmed = 0;  // slices cut or dropped where they overlapped earlier ones (events out of order)
  bool has_data() const { return first_ts != 0; }
  // Untimed NET_RX softirqs counted in [a, b), spans prorated by overlap.
  double UntimedDuring(uint64_t a, uint64_t b) const;
  uint64_t UntimedTotal() const;
};

struct ThreadInfo {
  int32_t tid = 0;
  int32_t tgid = 0;  // 0: unknown
  std::string name;
};

struct ProcessInfo {
  int32_t pid = 0;
  int32_t ppid = 0;
  std::string name;
  bool is_kthread = false;
};

struct NetRecord {
  uint64_t ts = 0;
  uint32_t cpu = 0;
  uint8_t kind = 0;       // model::NetTraceKind
  uint16_t device = 0;    // index into NetData::names; 0: unknown
  uint16_t reason = 0;    // index into NetData::names; 0: none
  int32_t queue = -1;
  int64_t value = 0;
  int64_t budget = 0;
};

struct NetData {
  std::vector<std::string> names = {""};  // devices and drop reasons
  std::vector<NetRecord> events;
  // Both branches string_view: a ternary of std::string and "" would make a
  // temporary std::string and return a view of it.
  std::string_view Name(uint16_t id) const { return id < names.size() ? std::string_view(names[id]) : std::string_view(); }
};

// An NCCL call's typed fields on its NVTX range (args nccl_comm,
// nccl_bytes, nccl_schema: the CUPTI library decodes them from the range's
// extended payload, NCCL 2.19+).
struct NcclRangeFields {
  bool present = false;
  uint64_t comm = 0;
  uint64_t bytes = 0;   // 0: unknown
  uint32_t schema = 0;  // index into TrackData::strings ("AllReduce"); 0: none
};

struct TrackSlice {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t track = 0;
  uint32_t name = 0;  // index into TrackData::strings
  uint32_t category = 0;
  uint64_t correlation_id = 0;
  // An integer arg named "payload": the scalar NVTX payload the CUPTI
  // library writes on a range (a communicator's hash on a collective's).
  uint64_t payload = 0;
  bool has_payload = false;
  NcclRangeFields nccl;
};

struct TrackFlow {
  uint64_t flow_id = 0;
  uint32_t slice = 0;  // index into TrackData::slices
  bool terminating = false;
};

struct CounterSample {
  uint64_t ts = 0;
  double value = 0;
};

struct TrackData {
  std::unordered_map<uint64_t, model::TrackInfo> tracks;
  std::vector<std::string> strings = {""};
  std::vector<TrackSlice> slices;  // completed slices, in end order
  std::vector<TrackFlow> flows;
  std::unordered_map<uint64_t, std::vector<CounterSample>> counters;
  std::string_view String(uint32_t id) const {
    return id < strings.size() ? std::string_view(strings[id]) : std::string_view();  // see NetData::Name
  }
  // The track's name, or its nearest named ancestor's.
  std::string TrackPath(uint64_t uuid) const;
  // What each track is (model/track_identity.h): from the trace's identity
  // instants, or for a track without one, from its name as traces before
  // them named it (analyze/legacy_track_identity.h). Analysis finds tracks
  // here, never by name.
  std::unordered_map<uint64_t, model::TrackIdentity> identities;
  const model::TrackIdentity* Identity(uint64_t uuid) const {
    auto it = identities.find(uuid);
    return it == identities.end() ? nullptr : &it->second;
  }
  model::TrackKind KindOf(uint64_t uuid) const {
    const model::TrackIdentity* id = Identity(uuid);
    return id ? id->kind : model::TrackKind::kUnknown;
  }
};

// An instant with args on gpunoise's network metadata track (identity
// kind net_metadata; "gpunoise network" in the UI) named for the record it
// holds ("irq", "napi", "net device", "net drop", ...): the network
// collectors' IRQ map and end-of-recording totals (analyze/net_metadata.h
// reads them).
struct MetaInstant {
  uint64_t ts = 0;
  std::string name;
  std::vector<model::TrackArg> args;
  const model::TrackArg* Find(std::string_view arg) const {
    for (const auto& a : args)
      if (a.name == arg) return &a;
    return nullptr;
  }
};

// Instants on the node metadata track (identity kind node_metadata;
// "gpunoise node" in the UI): CPU quotas and the processes they apply to
// (analyze/node_metadata.h reads them).

// The kwork collector's records (category "gpunoise.kwork"): IPI sends
// (start == end) and the spans of IPI callbacks, work items and hrtimer
// callbacks, with their typed args.
inline constexpr std::string_view kKernelWorkCategory = "gpunoise.kwork";
struct KernelWorkSpan {
  uint64_t start = 0, end = 0;
  uint32_t cpu = 0;
  int32_t tid = 0;  // sender, kworker, or the task the callback interrupted
  model::KernelWorkKind kind = model::KernelWorkKind::kIpiSend;
  uint64_t targets = 0;  // IPI send: CPUs 0..63
  uint64_t csd = 0;      // IPI send and callback: the request (call_single_data) both sides name; 0: unknown
  std::string function, callsite;
  std::string context;  // IPI send: "hardirq" or "softirq" when an interrupt sent it; empty: the task
};

class Timeline {
 public:
  std::vector<CpuTimeline> cpus;
  PodVector<Wakeup> wakeups;          // sorted by time
  std::vector<Migration> migrations;  // sorted by time
  std::unordered_map<int32_t, ProcessInfo> processes;
  std::map<int32_t, std::string> irq_names;
  NetData net;
  TrackData tracks;
  std::vector<MetaInstant> net_metadata;
  std::vector<MetaInstant> node_metadata;
  std::vector<KernelWorkSpan> kernel_work;  // in the trace's order
  std::optional<model::SessionInfo> session;
  std::optional<model::GpuLoss> gpu_loss;  // the recorder's GPU collection summary
  // Pid namespace, container, pod, rank and job of processes, by host pid
  // (model/process_identity.h); only those the recorder found any for.
  std::unordered_map<int32_t, model::ProcessIdentity> identities;
  // Rank of each GPU process in its job (pid -> rank), from the CUPTI
  // library's capture summary (its RANK / SLURM_PROCID).
  std::map<int32_t, int32_t> gpu_ranks;
  model::HostInfo host;
  // What the trace says of its losses in Perfetto's own fields (a trace from
  // Perfetto's recorder has nothing else): the latest ftrace_stats END with
  // its deltas, the service's stats, packets that followed a loss.
  std::optional<model::FtraceStatsSummary> ftrace_stats;
  std::optional<model::TraceServiceStats> service_stats;
  model::PacketLoss packet_loss;
  // The kernel log of the recording (time order) and the records it lost.
  std::vector<model::KernelLogEntry> kernel_log;
  uint64_t kernel_log_lost = 0;
  uint64_t start_ts = 0;  // first event
  uint64_t end_ts = 0;    // last event

  const ThreadInfo* Thread(int32_t tid) const;
  std::vector<int32_t> AllThreads() const;
  std::string ThreadName(int32_t tid) const;
  int32_t TgidOf(int32_t tid) const;  // the thread's own tid when unknown
  std::string ProcessName(int32_t tgid) const;
  bool IsKernelThread(int32_t tid) const;
  // "python3 (tid 4242, pid 4240)"; in a container or job with where:
  // "python3 (tid 4242, pid 4240, pod ml/trainer-0, container 3f7e0a52b1c9, rank 3)"
  std::string DescribeThread(int32_t tid) const;
  // The identity of the thread's process; null when the trace has none.
  const model::ProcessIdentity* IdentityOf(int32_t tid) const;
  // "pod ml/trainer-0, container 3f7e0a52b1c9, rank 3"; empty without one.
  std::string DescribeWhere(int32_t tid) const;
  // Hard IRQ or system vector: "eth0-rx-3 (irq 45)", "local_timer"
  std::string IrqName(int32_t id) const;

  // Storage for threads, indexed by tid through a dense table.
  std::vector<ThreadInfo> thread_store;
  std::vector<uint32_t> thread_slot;  // tid -> index + 1 into thread_store; 0: none
  // Linux hands out no tid above PID_MAX_LIMIT (4M, include/linux/threads.h):
  // the dense table covers those, and a tid beyond it (a corrupt or hostile
  // trace) goes here instead of sizing the table by it.
  static constexpr size_t kDenseTidLimit = size_t{4} << 20;
  std::unordered_map<int32_t, uint32_t> sparse_thread_slot;
  ThreadInfo& MutableThread(int32_t tid);
};

}  // namespace gpunoise::analyze
