#include "export/perfetto/trace_sink.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "export/perfetto/identity_packets.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/sequence_ids.h"

namespace gpunoise::perfetto {
namespace {

uint64_t RandomSalt() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

Result<std::unique_ptr<TraceSink>> TraceSink::Create(
    const std::string& path, perfetto::TraceCompression compression, int share_gid) {
  GN_ASSIGN_OR_RETURN(perfetto::TraceFileWriter writer,
                      perfetto::TraceFileWriter::Create(
                          path, perfetto::TraceFileWriter::kDefaultReserveBytes, compression, share_gid));
  return std::unique_ptr<TraceSink>(new TraceSink(std::move(writer)));
}

TraceSink::TraceSink(perfetto::TraceFileWriter writer)
    : writer_(std::move(writer)),
      track_events_(kTrackEventSequenceId, RandomSalt()),
      net_tracks_(track_events_, [this](const perfetto::TracePacketBuilder& p) { return Write(p); }),
      nic_tracks_(track_events_, net_tracks_, [this](const perfetto::TracePacketBuilder& p) { return Write(p); }),
      node_tracks_(track_events_, [this](const perfetto::TracePacketBuilder& p) { return Write(p); }),
      packet_(std::make_unique<perfetto::TracePacketBuilder>()) {}

TraceSink::~TraceSink() = default;

Status TraceSink::Write(const perfetto::TracePacketBuilder& packet) {
  Status st = writer_.WritePacket(packet);
  if (!st.ok() && first_error_.ok()) first_error_ = st;
  return st;
}

Status TraceSink::WriteSerialized(std::string_view packet) {
  Status st = writer_.WriteSerializedPacket(packet);
  if (!st.ok() && first_error_.ok()) first_error_ = st;
  return st;
}

std::string_view TraceSink::IrqName(int32_t irq) {
  auto it = irqs_.find(irq);
  if (it != irqs_.end() && !it->second.name.empty()) return it->second.name;
  auto fb = fallback_names_.find(irq);
  if (fb != fallback_names_.end()) return fb->second;
  std::string name;
  if (irq_fallback_) name = irq_fallback_(irq).value_or("");
  if (name.empty()) name = fmt::format("irq{}", irq);
  return fallback_names_.emplace(irq, std::move(name)).first->second;
}

Status TraceSink::WriteHeader(const model::HostInfo& host,
                                      const model::ProcessSnapshot& processes,
                                      const model::SessionInfo& session) {
  perfetto::FillClockSnapshot(packet_.get(), clock_override_.value_or(perfetto::ReadClocks()));
  GN_RETURN_IF_ERROR(Write(*packet_));
  perfetto::FillSystemInfo(packet_.get(), host, session.tool_version);
  GN_RETURN_IF_ERROR(Write(*packet_));
  perfetto::FillProcessTree(packet_.get(), processes);
  GN_RETURN_IF_ERROR(Write(*packet_));
  RememberIdentities(processes);
  perfetto::FillFtraceStats(packet_.get(), perfetto::StatsPhase::kStart, session);
  GN_RETURN_IF_ERROR(Write(*packet_));
  return writer_.Flush();
}

Status TraceSink::WriteCpuBatch(uint32_t cpu, model::EventView events,
                                        bool lost_events) {
  if (events.empty() && !lost_events) return OkStatus();
  EncodeCpuBundle(cpu, events, lost_events, encoder_, *this, &bundle_bytes_);
  return WriteEncodedCpuBatch(cpu, events, lost_events, bundle_bytes_);
}

void TraceSink::EncodeCpuBundle(uint32_t cpu, model::EventView events, bool lost_events,
                                perfetto::FtraceBundleEncoder& encoder, perfetto::IrqNameSource& irq_names,
                                std::string* bytes) const {
  bytes->clear();
  if ((events.empty() && !lost_events) || cpu >= model::kMaxTraceCpus) return;
  perfetto::FtraceBundleEncoder::BundleInfo info;
  info.cpu = cpu;
  info.lost_events = lost_events;
  info.previous_bundle_end_timestamp = cpu < last_bundle_end_.size() ? last_bundle_end_[cpu] : data_start_;
  encoder.EncodePacket(info, events, irq_names, bytes);
}

std::string_view TraceSink::LockedIrqName(int32_t irq) {
  std::lock_guard lock(irq_names_mu_);
  return IrqName(irq);
}

Status TraceSink::WriteEncodedCpuBatch(uint32_t cpu, model::EventView events, bool lost_events,
                                       std::string_view bundle) {
  if (events.empty() && !lost_events) return OkStatus();
  // Per-CPU tables below are sized by the CPU number.
  if (cpu >= model::kMaxTraceCpus)
    return MakeError("CPU {} is past the {} CPUs a trace can hold", cpu, model::kMaxTraceCpus);
  if (last_bundle_end_.size() <= cpu) last_bundle_end_.resize(cpu + 1, data_start_);
  if (!events.empty()) last_bundle_end_[cpu] = events.back().ts;
  // The bundle is the next packet; the vector slices follow it. One pass
  // counts both and finds the vector events: a batch is up to 16k events of
  // 96 bytes, and each pass over it comes from memory.
  PendingEvents bundle_events{writer_.accepted_packets() + 1, cpu, {}};
  PendingEvents vectors{0, cpu, {}};
  vector_positions_.clear();
  // Only entries that speak for untimed ones are kept, each with the timed
  // NET_RX entry before it; the rest only move that mark.
  if (untimed_.size() <= cpu) untimed_.resize(cpu + 1);
  uint64_t last_netrx = untimed_[cpu].last_entry;
  for (size_t i = 0; i < events.size(); ++i) {
    const model::Event& ev = events[i];
    const bool ftrace = perfetto::HasFtraceForm(ev);
    ++(ftrace ? bundle_events : vectors).kinds[model::EventKindIndex(ev)];
    if (!ftrace) vector_positions_.push_back(static_cast<uint32_t>(i));
    if (const auto* entry = std::get_if<model::SoftirqEntry>(&ev.payload);
        entry && entry->vec == static_cast<uint32_t>(model::SoftirqVec::kNetRx)) {
      if (entry->untimed_before) untimed_seen_.push_back({ev.ts, last_netrx, entry->untimed_before});
      last_netrx = ev.ts;
    }
  }
  untimed_[cpu].last_entry = last_netrx;
  pending_.push_back(bundle_events);
  Status st = WriteSerialized(bundle);
  // After the bundle: its counter samples are packets of their own.
  for (const UntimedEntry& e : untimed_seen_)
    if (st.ok()) st = NoteUntimed(cpu, e);
  untimed_seen_.clear();
  if (st.ok()) st = WriteVectorSlices(cpu, events, vector_positions_);
  vectors.last_packet = writer_.accepted_packets();
  if (vectors.last_packet > bundle_events.last_packet) pending_.push_back(vectors);
  ForgetDurable();
  return st;
}

Status TraceSink::NoteUntimed(uint32_t cpu, const UntimedEntry& e) {
  UntimedCount& u = untimed_[cpu];
  const uint64_t ts = e.ts, previous_entry = e.previous_entry;
  // A storm times thousands of entries a second per CPU: one sample a
  // millisecond keeps the counter's bytes small next to the slices' and
  // finer than any window the report looks through.
  constexpr uint64_t kSampleEveryNs = 1'000'000;
  const bool unsampled = u.total != u.sampled;
  u.total += e.count;
  if (u.written && ts < u.sampled_at + kSampleEveryNs) return OkStatus();
  // The count rose after the previous timed entry, not before it: a sample
  // of the old value there bounds the rise from below (at a storm's start,
  // once timed entries without untimed ones came since the last sample).
  if (!unsampled && previous_entry > u.sampled_at)
    GN_RETURN_IF_ERROR(node_tracks_.WriteNetRxUntimed(previous_entry, cpu, u.sampled));
  u.written = true;
  u.sampled = u.total;
  u.sampled_at = ts;
  return node_tracks_.WriteNetRxUntimed(ts, cpu, u.total);
}

Status TraceSink::WriteNetRxUntimedTotals(uint64_t ts, std::span<const uint64_t> kernel_totals) {
  if (untimed_.size() < kernel_totals.size()) untimed_.resize(kernel_totals.size());
  for (uint32_t cpu = 0; cpu < untimed_.size(); ++cpu) {
    UntimedCount& u = untimed_[cpu];
    u.total = std::max(u.total, cpu < kernel_totals.size() ? kernel_totals[cpu] : 0);
    if (u.written && u.total == u.sampled) continue;
    if (u.total == 0) continue;
    u.written = true;
    u.sampled = u.total;
    u.sampled_at = std::max(ts, u.sampled_at);
    GN_RETURN_IF_ERROR(node_tracks_.WriteNetRxUntimed(u.sampled_at, cpu, u.total));
  }
  return OkStatus();
}

uint64_t TraceSink::netrx_untimed() const {
  uint64_t n = 0;
  for (const UntimedCount& u : untimed_) n += u.total;
  return n;
}

void TraceSink::ForgetDurable() {
  while (!pending_.empty() && pending_.front().last_packet <= writer_.durable_packets()) pending_.pop_front();
}

void TraceSink::TakeUnwritten(
    const std::function<void(uint32_t cpu, std::string_view kind, uint64_t n)>& fn) {
  ForgetDurable();
  for (const PendingEvents& p : pending_)
    for (size_t kind = 0; kind < p.kinds.size(); ++kind)
      if (p.kinds[kind]) fn(p.cpu, model::EventKindName(kind), p.kinds[kind]);
  pending_.clear();
}

// Perfetto has no ftrace message the trace processor turns into slices for
// IPIs and other system vectors (only the local timer), so those become
// track-event slices on one track per CPU.
Status TraceSink::WriteVectorSlices(uint32_t cpu, model::EventView events,
                                    std::span<const uint32_t> positions) {
  if (positions.empty()) return OkStatus();
  if (cpu >= vector_writers_.size()) vector_writers_.resize(cpu + 1);
  std::unique_ptr<TrackEventWriter>& writer = vector_writers_[cpu];
  if (!writer) {
    if (!vector_parent_track_) {
      vector_parent_track_ = track_events_.TrackUuid("system vectors");
      track_events_.FillTrackDescriptor(packet_.get(), vector_parent_track_,
                                        "System vectors (IPIs, irq_work)", 0,
                                        "x86 system vectors irq_handler_entry does not report");
      GN_RETURN_IF_ERROR(Write(*packet_));
    }
    uint64_t uuid = track_events_.TrackUuid(fmt::format("system vectors cpu {}", cpu));
    track_events_.FillTrackDescriptor(packet_.get(), uuid, fmt::format("Vectors Cpu {}", cpu),
                                      vector_parent_track_);
    GN_RETURN_IF_ERROR(Write(*packet_));
    writer = std::make_unique<TrackEventWriter>(CpuVectorSequenceId(cpu), track_events_.salt(), uuid);
  }
  const uint64_t track = writer->default_track();
  for (uint32_t at : positions) {
    const model::Event& ev = events[at];
    if (auto* v = std::get_if<model::VectorEntry>(&ev.payload)) {
      // Interned: under a TCP stream a CPU takes 12k-15k call-function
      // IPIs a second, and with the name, category and arg name spelled out
      // their begins were a quarter of the recording's bytes before zlib.
      auto e = writer->FillInternedSliceBegin(packet_.get(), ev.ts, track, model::VectorName(v->kind), "irq_vectors");
      writer->AddInternedArg(e, "vector", int64_t{v->vector});
      writer->FinishInterned(packet_.get());
    } else {
      writer->FillSliceEnd(packet_.get(), ev.ts, track);
    }
    GN_RETURN_IF_ERROR(Write(*packet_));
  }
  return OkStatus();
}

Status TraceSink::WriteFooter(const model::ProcessSnapshot& processes,
                                      const model::SessionInfo& session) {
  // The footer is written even after a disk-full error: the writer has
  // released its reserve for exactly this.
  Status result = OkStatus();
  auto keep = [&](Status st) {
    if (!st.ok() && result.ok()) result = st;
  };
  perfetto::FillProcessTree(packet_.get(), processes);
  keep(writer_.WritePacket(*packet_));
  RememberIdentities(processes);
  std::vector<model::ProcessIdentity> identities;
  for (const auto& [pid, id] : identities_) identities.push_back(id);
  keep(perfetto::WriteProcessIdentities(processes.ts, identities, track_events_, writer_));
  model::IrqTable named = irqs_;
  for (const auto& [irq, name] : fallback_names_) named[irq].name = name;
  perfetto::FillInterruptInfo(packet_.get(), named);
  keep(writer_.WritePacket(*packet_));
  perfetto::FillFtraceStats(packet_.get(), perfetto::StatsPhase::kEnd, session);
  keep(writer_.WritePacket(*packet_));
  keep(perfetto::WriteSessionSummary(track_events_, session, writer_));
  perfetto::FillClockSnapshot(packet_.get(), clock_override_.value_or(perfetto::ReadClocks()));
  keep(writer_.WritePacket(*packet_));
  keep(writer_.Flush());
  return result;
}

void TraceSink::RememberIdentities(const model::ProcessSnapshot& processes) {
  // Start and end scans together: processes that ended during the
  // recording keep what the first scan saw of them.
  for (const model::ProcessInfo& p : processes.processes) {
    if (!p.identity.worth_recording()) continue;
    auto [it, first] = identities_.try_emplace(p.pid, p.identity);
    uint64_t& started = identity_starts_[p.pid];
    bool same_process = !first && started == p.start_from_boot_ns;
    started = p.start_from_boot_ns;
    if (first) continue;
    // The second scan: throttling over the recording is end less start.
    model::CgroupThrottling start = it->second.cpu_stat;
    // The start scan read the environment with root's capabilities; the end
    // scan, after the drop, cannot read other users' (docs/containers.md,
    // "Rank and job after the capability drop"): what it could not read
    // is unknown, not gone.
    model::JobIdentity start_job = it->second.job;
    it->second = p.identity;
    if (same_process && p.identity.environ_unreadable && p.identity.job.empty()) it->second.job = start_job;
    const model::CgroupThrottling& end = p.identity.cpu_stat;
    if (start.valid && end.valid && start.file == end.file && end.nr_periods >= start.nr_periods) {
      model::CgroupThrottling& d = it->second.cpu_stat_delta;
      d = end;
      d.nr_periods -= start.nr_periods;
      d.nr_throttled -= std::min(start.nr_throttled, end.nr_throttled);
      d.throttled_ns -= std::min(start.throttled_ns, end.throttled_ns);
    }
  }
}

Status TraceSink::Commit() { return writer_.Commit(); }

}  // namespace gpunoise::perfetto
