#include "analyze/timeline_builder.h"
#include "analyze/untimed_softirqs.h"

#include <algorithm>

#include "analyze/legacy_track_identity.h"
#include "import/gpu_summary_reader.h"
#include "import/identity_reader.h"
#include "model/gpu_capture.h"
#include "import/session_summary_reader.h"
#include "import/track_identity_reader.h"

namespace gpunoise::analyze {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

template <typename T>
void SortByStart(PodVector<T>& v) {
  std::stable_sort(v.begin(), v.end(), [](const T& a, const T& b) { return a.start < b.start; });
}

// Sorted slices that overlap only come from a corrupt or hostile trace
// (events out of order on one CPU). Every reader of a CPU's slices relies on
// them tiling time without overlap (ends sorted like starts), so the later
// slice loses the part the earlier one already covers.
template <typename T>
uint64_t TrimOverlaps(PodVector<T>& v) {
  size_t kept = 0;
  uint64_t trimmed = 0;
  uint64_t covered_until = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    T s = v[i];
    if (kept && s.start < covered_until) {
      s.start = covered_until;
      ++trimmed;
    }
    if (s.end <= s.start && !(s.end == s.start && v[i].start == v[i].end)) {
      trimmed += s.start == v[i].start;  // ended before it began: dropped, not cut
      continue;
    }
    covered_until = std::max(covered_until, s.end);
    v[kept++] = s;
  }
  v.truncate(kept);
  return trimmed;
}

// Appends, noting when the order breaks so Finish() sorts only what needs it.
template <typename T>
void Append(PodVector<T>& v, const T& item, bool* unsorted) {
  if (!v.empty() && item.start < v.back().start) *unsorted = true;
  v.push_back(item);
}

// gpunoise's metadata instants (docs/network.md, "Trace format"; node
// metadata): "gpunoise" on the metadata tracks, "gpunoise.link" for link
// events, which sit on their device's track and PCIe retrains on "PCIe"
// (export/perfetto/nic_tracks.h) and are read with the network metadata.
constexpr std::string_view kMetadataCategory = "gpunoise";
constexpr std::string_view kLinkCategory = "gpunoise.link";

}  // namespace

CpuTimeline& TimelineBuilder::Cpu(uint32_t cpu) {
  if (cpu >= t_.cpus.size()) t_.cpus.resize(cpu + 1);
  return t_.cpus[cpu];
}

TimelineBuilder::OpenCpu& TimelineBuilder::Open(uint32_t cpu) {
  if (cpu >= open_.size()) open_.resize(cpu + 1);
  return open_[cpu];
}

void TimelineBuilder::Name(int32_t tid, const model::TaskComm& comm) {
  if (tid <= 0) return;
  std::string_view name = comm.view();
  if (name.empty()) return;
  ThreadInfo& t = t_.MutableThread(tid);
  if (t.name != name) t.name.assign(name.data(), name.size());
}

void TimelineBuilder::SetTgid(int32_t tid, int32_t tgid) {
  if (tid <= 0 || tgid <= 0) return;
  t_.MutableThread(tid).tgid = tgid;
}

void TimelineBuilder::CloseRun(uint32_t cpu, uint64_t ts, int32_t state) {
  OpenCpu& o = Open(cpu);
  if (o.current >= 0 && ts >= o.since) Append(Cpu(cpu).runs, RunSlice{o.since, ts, o.current, state}, &o.runs_unsorted);
  o.current = -1;
}

void TimelineBuilder::OnEvent(const model::Event& ev) {
  CpuTimeline& c = Cpu(ev.cpu);
  if (!c.first_ts || ev.ts < c.first_ts) c.first_ts = ev.ts;
  if (ev.ts > c.last_ts) c.last_ts = ev.ts;
  if (!t_.start_ts || ev.ts < t_.start_ts) t_.start_ts = ev.ts;
  if (ev.ts > t_.end_ts) t_.end_ts = ev.ts;
  OpenCpu& o = Open(ev.cpu);

  // Context switches are most of a trace: take them before the visit.
  if (const auto* s = std::get_if<model::SchedSwitch>(&ev.payload)) {
    OnSwitch(ev, *s, c, o);
    return;
  }
  std::visit(
      Overloaded{
          [&](const model::SchedSwitch& s) { OnSwitch(ev, s, c, o); },
          [&](const model::SchedWaking& w) {
            if (!t_.wakeups.empty() && ev.ts < t_.wakeups.back().ts) wakeups_unsorted_ = true;
            t_.wakeups.push_back({ev.ts, w.tid, static_cast<int16_t>(w.target_cpu), static_cast<uint16_t>(ev.cpu),
                                  ev.tid, ev.common_flags});
            Name(w.tid, w.comm);
            if (w.tgid) SetTgid(w.tid, w.tgid);
          },
          [&](const model::SchedMigrate& m) {
            t_.migrations.push_back({ev.ts, m.tid, m.orig_cpu, m.dest_cpu});
            Name(m.tid, m.comm);
          },
          [&](const model::ProcessFork& f) {
            Name(f.child_tid, f.child_comm);
            if (f.is_thread) {
              if (f.child_tgid) SetTgid(f.child_tid, f.child_tgid);
              else forks_.push_back({f.parent_tid, f.child_tid});
            } else {
              SetTgid(f.child_tid, f.child_tgid ? f.child_tgid : f.child_tid);
            }
            if (f.parent_tgid) SetTgid(f.parent_tid, f.parent_tgid);
          },
          [&](const model::ProcessExec& x) {
            if (x.tgid) SetTgid(x.tid, x.tgid);
            std::string_view file = x.filename.view();
            size_t slash = file.rfind('/');
            if (slash != std::string_view::npos) file = file.substr(slash + 1);
            if (!file.empty()) {
              int32_t pid = x.tgid ? x.tgid : x.tid;
              auto& p = t_.processes[pid];
              p.pid = pid;
              p.name = std::string(file);
            }
          },
          [&](const model::ProcessExit& x) {
            Name(x.tid, x.comm);
            if (x.tgid) SetTgid(x.tid, x.tgid);
          },
          [&](const model::TaskRename& r) { Name(r.tid, r.new_comm); },
          [&](const model::IrqEntry& e) {
            if (o.irq != INT32_MIN && ev.ts >= o.irq_start)  // exit never arrived
              Append(c.hardirqs, IntrSlice{o.irq_start, ev.ts, o.irq, o.current < 0 ? 0 : o.current}, &o.hardirqs_unsorted);
            o.irq = e.irq;
            o.irq_start = ev.ts;
          },
          [&](const model::IrqExit& e) {
            if (o.irq == e.irq && ev.ts >= o.irq_start)
              Append(c.hardirqs, IntrSlice{o.irq_start, ev.ts, o.irq, o.current < 0 ? 0 : o.current}, &o.hardirqs_unsorted);
            o.irq = INT32_MIN;
          },
          [&](const model::VectorEntry& e) {
            int32_t id = VectorIrqId(static_cast<uint32_t>(e.kind));
            if (o.irq != INT32_MIN && ev.ts >= o.irq_start)
              Append(c.hardirqs, IntrSlice{o.irq_start, ev.ts, o.irq, o.current < 0 ? 0 : o.current}, &o.hardirqs_unsorted);
            o.irq = id;
            o.irq_start = ev.ts;
          },
          [&](const model::VectorExit& e) {
            int32_t id = VectorIrqId(static_cast<uint32_t>(e.kind));
            if (o.irq == id && ev.ts >= o.irq_start)
              Append(c.hardirqs, IntrSlice{o.irq_start, ev.ts, o.irq, o.current < 0 ? 0 : o.current}, &o.hardirqs_unsorted);
            o.irq = INT32_MIN;
          },
          [&](const model::SoftirqEntry& e) {
            if (o.softirq >= 0 && ev.ts >= o.softirq_start)
              Append(c.softirqs, IntrSlice{o.softirq_start, ev.ts, o.softirq, o.current < 0 ? 0 : o.current}, &o.softirqs_unsorted);
            o.softirq = static_cast<int32_t>(e.vec);
            o.softirq_start = ev.ts;
          },
          [&](const model::SoftirqExit& e) {
            if (o.softirq == static_cast<int32_t>(e.vec) && ev.ts >= o.softirq_start)
              Append(c.softirqs, IntrSlice{o.softirq_start, ev.ts, o.softirq, o.current < 0 ? 0 : o.current}, &o.softirqs_unsorted);
            o.softirq = -1;
          },
          [&](const model::SoftirqRaise&) {},
          // Events the timeline does not use (and any the model gains later).
          [&](const auto&) {},
      },
      ev.payload);
}

void TimelineBuilder::OnSwitch(const model::Event& ev, const model::SchedSwitch& s, CpuTimeline& c, OpenCpu& o) {
  if (o.current >= 0) {
    bool broken = s.prev_tid >= 0 && s.prev_tid != o.current;
    if (broken) ++c.chain_breaks;
    Append(c.runs, RunSlice{o.since, ev.ts, o.current, broken ? kStateUnknown : static_cast<int32_t>(s.prev_state)},
           &o.runs_unsorted);
  }
  o.current = s.next_tid;
  o.since = ev.ts;
  Name(s.next_tid, s.next_comm);
  if (s.prev_tgid) SetTgid(s.prev_tid, s.prev_tgid);
  if (s.next_tgid) SetTgid(s.next_tid, s.next_tgid);
}

void TimelineBuilder::OnCpuLoss(uint32_t cpu, uint64_t from_ts, uint64_t to_ts) {
  CpuTimeline& c = Cpu(cpu);
  OpenCpu& o = Open(cpu);
  uint64_t end = from_ts ? from_ts : c.last_ts;
  // What ran before the gap ran at least until the last event we saw; what
  // happened in the gap is unknown, and so is the task current after it.
  if (o.current >= 0) CloseRun(cpu, std::max(end, o.since), kStateUnknown);
  o.current = -1;
  o.irq = INT32_MIN;
  o.softirq = -1;
  c.losses.push_back({from_ts, to_ts});
}

uint16_t TimelineBuilder::NetName(std::string_view s) {
  if (s.empty()) return 0;
  auto it = net_names_.find(std::string(s));
  if (it != net_names_.end()) return it->second;
  if (t_.net.names.size() >= 65535) return 0;
  uint16_t id = static_cast<uint16_t>(t_.net.names.size());
  t_.net.names.emplace_back(s);
  net_names_.emplace(std::string(s), id);
  return id;
}

void TimelineBuilder::OnNetEvent(const model::NetTraceEvent& e) {
  NetRecord r;
  r.ts = e.ts;
  r.cpu = e.cpu;
  r.kind = static_cast<uint8_t>(e.kind);
  r.device = NetName(e.device);
  r.reason = NetName(e.reason);
  if (!r.reason && e.kind == model::NetTraceKind::kDrop && e.value)
    r.reason = NetName("reason " + std::to_string(e.value));
  r.queue = e.queue;
  r.value = e.value;
  r.budget = e.budget;
  t_.net.events.push_back(r);
}

void TimelineBuilder::OnProcess(int32_t pid, int32_t ppid, std::string_view name, bool is_kthread) {
  auto& p = t_.processes[pid];
  p.pid = pid;
  p.ppid = ppid;
  if (!name.empty()) p.name = std::string(name);
  p.is_kthread = is_kthread;
  SetTgid(pid, pid);
}

void TimelineBuilder::OnThread(int32_t tid, int32_t tgid, std::string_view name) {
  if (tid <= 0) return;
  ThreadInfo& t = t_.MutableThread(tid);
  if (tgid > 0) t.tgid = tgid;
  if (!name.empty()) t.name = std::string(name);
}

void TimelineBuilder::OnIrqName(int32_t irq, std::string_view name) {
  auto& slot = t_.irq_names[irq];
  if (slot != name) slot = std::string(name);
}

void TimelineBuilder::OnHostInfo(const model::HostInfo& host) {
  std::string hostname = t_.host.hostname;
  t_.host = host;
  if (host.hostname.empty()) t_.host.hostname = hostname;
}

void TimelineBuilder::OnFtraceStats(const model::FtraceStatsSummary& stats) {
  // Each END covers the trace so far: the latest one stands.
  t_.ftrace_stats = stats;
}

void TimelineBuilder::OnTraceStats(const model::TraceServiceStats& stats) {
  // The service writes its stats at each flush; the last one covers the most.
  t_.service_stats = stats;
}

void TimelineBuilder::OnPacketLoss(uint32_t sequence_id, uint32_t) {
  ++t_.packet_loss.packets;
  if (lossy_sequences_.insert(sequence_id).second) ++t_.packet_loss.sequences;
}

void TimelineBuilder::OnTrack(const model::TrackInfo& track) {
  auto& slot = t_.tracks.tracks[track.uuid];
  // A descriptor may be re-emitted; keep what any copy said.
  if (!track.name.empty() || slot.uuid == 0) slot = track;
}

int64_t TimelineBuilder::AddKernelWork(const model::TrackEventRecord& e) {
  KernelWorkSpan w;
  w.start = w.end = e.ts;
  int64_t v = 0;
  if (const model::TrackArg* a = e.FindArg("kind")) {
    auto kind = model::KernelWorkKindFromName(a->string_value);
    if (!kind) return -1;  // a kind this reader does not know
    w.kind = *kind;
  } else {
    return -1;
  }
  if (const model::TrackArg* a = e.FindArg("cpu"); a && a->AsInt64(&v)) w.cpu = static_cast<uint32_t>(v);
  if (const model::TrackArg* a = e.FindArg("tid"); a && a->AsInt64(&v)) w.tid = static_cast<int32_t>(v);
  if (const model::TrackArg* a = e.FindArg("targets"); a && a->AsInt64(&v)) w.targets = static_cast<uint64_t>(v);
  if (const model::TrackArg* a = e.FindArg("csd"); a && a->AsInt64(&v)) w.csd = static_cast<uint64_t>(v);
  if (const model::TrackArg* a = e.FindArg("function")) w.function = a->string_value;
  if (const model::TrackArg* a = e.FindArg("callsite")) w.callsite = a->string_value;
  if (const model::TrackArg* a = e.FindArg("context")) w.context = a->string_value;
  t_.kernel_work.push_back(std::move(w));
  return static_cast<int64_t>(t_.kernel_work.size() - 1);
}

uint32_t TimelineBuilder::TrackString(std::string_view s) {
  if (s.empty()) return 0;
  auto it = track_strings_.find(std::string(s));
  if (it != track_strings_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(t_.tracks.strings.size());
  t_.tracks.strings.emplace_back(s);
  track_strings_.emplace(std::string(s), id);
  return id;
}

void TimelineBuilder::OnTrackEvent(const model::TrackEventRecord& e) {
  if (import::IsGpuLossSummary(e)) {
    t_.gpu_loss = import::ParseGpuLossSummary(e);
    return;
  }
  if (import::IsProcessIdentity(e)) {
    model::ProcessIdentity id = import::ParseProcessIdentity(e);
    if (id.pid > 0) t_.identities[id.pid] = std::move(id);
    return;
  }
  if (import::IsTrackIdentity(e)) {
    if (auto id = import::ParseTrackIdentity(e)) t_.tracks.identities[id->first] = std::move(id->second);
    return;
  }
  if (import::IsSessionSummary(e)) {
    t_.session = import::ParseSessionSummary(e);
    if (t_.host.hostname.empty()) t_.host.hostname = t_.session->hostname;
    return;
  }
  if (e.type == model::TrackEventType::kInstant && e.name == model::kCuptiCaptureSummaryEvent) {
    int64_t pid = 0, rank = -1;
    const model::TrackArg* p = e.FindArg("pid");
    const model::TrackArg* r = e.FindArg("rank");
    if (p && r && p->AsInt64(&pid) && r->AsInt64(&rank) && pid > 0 && rank >= 0)
      t_.gpu_ranks[static_cast<int32_t>(pid)] = static_cast<int32_t>(rank);
  }
  uint64_t correlation = e.correlation_id;
  if (!correlation) {
    for (std::string_view key : {"correlation_id", "correlation id", "correlationId", "correlation"}) {
      if (const model::TrackArg* a = e.FindArg(key)) {
        int64_t v = 0;
        if (a->AsInt64(&v)) correlation = static_cast<uint64_t>(v);
        break;
      }
    }
  }
  auto add_flows = [&](uint32_t slice, const std::vector<uint64_t>& ids, bool terminating) {
    for (uint64_t id : ids) t_.tracks.flows.push_back({id, slice, terminating});
  };
  switch (e.type) {
    case model::TrackEventType::kCounter:
      t_.tracks.counters[e.track_uuid].push_back({e.ts, e.counter_value});
      break;
    case model::TrackEventType::kSliceBegin:
    {
      OpenSlice open{e.ts, TrackString(e.name), TrackString(e.category), correlation, e.flow_ids,
                     e.terminating_flow_ids};
      int64_t payload = 0;
      if (const model::TrackArg* a = e.FindArg("payload"); a && a->AsInt64(&payload)) {
        open.payload = static_cast<uint64_t>(payload);
        open.has_payload = true;
      }
      if (e.category == kKernelWorkCategory) open.kernel_work = AddKernelWork(e);
      if (const model::TrackArg* a = e.FindArg("nccl_comm"); a && a->AsInt64(&payload)) {
        open.nccl.present = true;
        open.nccl.comm = static_cast<uint64_t>(payload);
        int64_t bytes = 0;
        if (const model::TrackArg* b = e.FindArg("nccl_bytes"); b && b->AsInt64(&bytes) && bytes > 0)
          open.nccl.bytes = static_cast<uint64_t>(bytes);
        if (const model::TrackArg* k = e.FindArg("nccl_schema"); k && k->type == model::TrackArg::Type::kString)
          open.nccl.schema = TrackString(k->string_value);
      }
      open_slices_[e.track_uuid].push_back(std::move(open));
      break;
    }
    case model::TrackEventType::kSliceEnd: {
      auto it = open_slices_.find(e.track_uuid);
      if (it == open_slices_.end() || it->second.empty()) break;
      OpenSlice s = std::move(it->second.back());
      it->second.pop_back();
      uint32_t index = static_cast<uint32_t>(t_.tracks.slices.size());
      t_.tracks.slices.push_back({s.start, std::max(e.ts, s.start), e.track_uuid, s.name, s.category,
                                  s.correlation_id, s.payload, s.has_payload, s.nccl});
      add_flows(index, s.flows, false);
      add_flows(index, s.terminating_flows, true);
      add_flows(index, e.flow_ids, false);
      add_flows(index, e.terminating_flow_ids, true);
      if (s.kernel_work >= 0) t_.kernel_work[static_cast<size_t>(s.kernel_work)].end = std::max(e.ts, s.start);
      break;
    }
    case model::TrackEventType::kInstant: {
      const bool plain = e.flow_ids.empty() && e.terminating_flow_ids.empty() && !correlation;
      if (e.category == kMetadataCategory || e.category == kLinkCategory || (plain && e.category.empty())) {
        pending_meta_.push_back({e.track_uuid, e.category == kLinkCategory, {e.ts, std::string(e.name), e.args}});
        break;
      }
      if (e.category == kKernelWorkCategory) {
        AddKernelWork(e);
        break;
      }
      // Instants with flows or a correlation id (a launch recorded as a
      // point) take part in GPU attribution as zero-length slices.
      if (e.flow_ids.empty() && e.terminating_flow_ids.empty() && !correlation) break;
      uint32_t index = static_cast<uint32_t>(t_.tracks.slices.size());
      t_.tracks.slices.push_back({e.ts, e.ts, e.track_uuid, TrackString(e.name),
                                  TrackString(e.category), correlation});
      add_flows(index, e.flow_ids, false);
      add_flows(index, e.terminating_flow_ids, true);
      break;
    }
  }
}

void TimelineBuilder::ResolveTracks() {
  // Tracks without a typed identity: an old trace's, known by name.
  for (const auto& [uuid, track] : t_.tracks.tracks)
    if (!t_.tracks.identities.count(uuid))
      if (auto id = LegacyTrackIdentity(t_.tracks, uuid)) t_.tracks.identities.emplace(uuid, std::move(*id));
  // A GPU process group's pid is its process track's.
  for (auto& [uuid, id] : t_.tracks.identities)
    if (id.process_track)
      if (auto it = t_.tracks.tracks.find(id.process_track); it != t_.tracks.tracks.end()) id.pid = it->second.pid;
  for (PendingMeta& m : pending_meta_) {
    model::TrackKind kind = t_.tracks.KindOf(m.track);
    if (m.link || kind == model::TrackKind::kNetMetadata) t_.net_metadata.push_back(std::move(m.instant));
    else if (kind == model::TrackKind::kNodeMetadata) t_.node_metadata.push_back(std::move(m.instant));
  }
  pending_meta_.clear();
}

Timeline TimelineBuilder::Finish() {
  ResolveTracks();
  std::stable_sort(t_.kernel_log.begin(), t_.kernel_log.end(),
                   [](const model::KernelLogEntry& a, const model::KernelLogEntry& b) { return a.ts < b.ts; });
  for (uint32_t cpu = 0; cpu < open_.size(); ++cpu) {
    OpenCpu& o = open_[cpu];
    // A task still on the CPU at the end ran until the data ends.
    if (o.current >= 0) CloseRun(cpu, std::max(t_.end_ts, o.since), kStateStillRunning);
    if (o.irq != INT32_MIN) Append(Cpu(cpu).hardirqs, IntrSlice{o.irq_start, t_.end_ts, o.irq, 0}, &o.hardirqs_unsorted);
    if (o.softirq >= 0) Append(Cpu(cpu).softirqs, IntrSlice{o.softirq_start, t_.end_ts, o.softirq, 0}, &o.softirqs_unsorted);
    CpuTimeline& c = Cpu(cpu);
    if (o.runs_unsorted) SortByStart(c.runs);
    if (o.hardirqs_unsorted) SortByStart(c.hardirqs);
    if (o.softirqs_unsorted) SortByStart(c.softirqs);
    c.slices_trimmed = TrimOverlaps(c.runs) + TrimOverlaps(c.hardirqs) + TrimOverlaps(c.softirqs);
    o = OpenCpu{};
  }
  // Threads created with CLONE_THREAD join their creator's process.
  for (const auto& f : forks_) {
    int32_t tgid = t_.TgidOf(f.parent_tid);
    SetTgid(f.child_tid, tgid);
  }
  forks_.clear();
  auto by_ts = [](const auto& a, const auto& b) { return a.ts < b.ts; };
  // In place: a stable sort would allocate another copy of every wakeup.
  if (wakeups_unsorted_) std::sort(t_.wakeups.begin(), t_.wakeups.end(), by_ts);
  wakeups_unsorted_ = false;
  if (!std::is_sorted(t_.migrations.begin(), t_.migrations.end(), by_ts))
    std::stable_sort(t_.migrations.begin(), t_.migrations.end(), by_ts);
  for (auto& [_, samples] : t_.tracks.counters)
    if (!std::is_sorted(samples.begin(), samples.end(), by_ts))
      std::stable_sort(samples.begin(), samples.end(), by_ts);
  // Threads the process tree listed as their own process are main threads.
  for (auto& th : t_.thread_store)
    if (!th.tgid && t_.processes.count(th.tid)) th.tgid = th.tid;
  EstimateUntimedSoftirqs(t_);
  Timeline out = std::move(t_);
  t_ = Timeline{};
  open_.clear();
  return out;
}

}  // namespace gpunoise::analyze
