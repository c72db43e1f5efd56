#include "record/record_intake.h"

#include <cstddef>
#include <algorithm>
#include <cstring>

#include "collect/record_decoder.h"
#include "collect/records.h"
#include "model/pid_ns_map.h"

namespace gpunoise::record {
namespace {

// An entry that carries its raise becomes two events in the trace
// (FtraceBundleEncoder): both count, as they did when raises were records.
uint64_t EventsInTrace(const model::Event& e) {
  const auto* entry = std::get_if<model::SoftirqEntry>(&e.payload);
  return entry && entry->raise_wait_ns != 0 ? 2 : 1;
}

}  // namespace

RecordIntake::RecordIntake(size_t max_cpu) : batches_(max_cpu + 1) { owners_.fill(-1); }

void RecordIntake::SetOwner(uint16_t kind, size_t collector) {
  if (kind >= owners_.size()) return;
  owners_[kind] = static_cast<int8_t>(collector);
  collectors_ = std::max(collectors_, collector + 1);
  for (CpuBatch& b : batches_)
    if (b.collector_events.size() < collectors_) b.collector_events.resize(collectors_, 0);
}

uint64_t RecordIntake::collector_events(size_t collector) const {
  uint64_t n = 0;
  for (const CpuBatch& b : batches_)
    if (collector < b.collector_events.size()) n += b.collector_events[collector];
  return n;
}

void RecordIntake::OnRecord(uint32_t cpu, std::span<const uint8_t> data) {
  uint16_t kind = 0;
  if (data.size() >= sizeof(gn_header))
    std::memcpy(&kind, data.data() + offsetof(gn_header, kind), sizeof(kind));
  if (cpu >= batches_.size()) {
    gn_batch_hdr hdr{};
    if (kind == GN_REC_BATCH && data.size() >= sizeof(hdr)) std::memcpy(&hdr, data.data(), sizeof(hdr));
    records_outside_cpus_ += kind == GN_REC_BATCH ? hdr.count : 1;
    return;
  }
  CpuBatch& b = batches_[cpu];
  b.drained += collect::EventsInRingRecord(data);  // as the drain's budget counts
  if (kind == GN_REC_BATCH) {
    OnBatch(cpu, b, data);
    return;
  }
  OnOne(cpu, b, data, false);
}

void RecordIntake::OnBatch(uint32_t cpu, CpuBatch& b, std::span<const uint8_t> data) {
  gn_batch_hdr hdr;
  if (data.size() < sizeof(hdr)) {
    ++b.decode_errors;
    return;
  }
  std::memcpy(&hdr, data.data(), sizeof(hdr));
  // A batch from another CPU's programs cannot be ordered with this CPU's
  // records: malformed, its records counted as decode errors.
  if (hdr.cpu != cpu || hdr.stream >= CpuStaging::kMaxStreams || hdr.end_seq - hdr.first_seq != hdr.count) {
    b.decode_errors += std::max<uint64_t>(hdr.count, 1);
    return;
  }
  // Sequences start at 0 with each object's load: the first batch of a
  // stream that is not at 0 follows lost ones too.
  uint64_t& next = b.next_batch_seq[hdr.stream];
  if (hdr.first_seq > next) b.batch_seq_missing += hdr.first_seq - next;
  next = hdr.end_seq;
  ++b.batches;
  b.bytes_total += sizeof(hdr);
  size_t off = sizeof(hdr);
  uint32_t done = 0;
  // One record at the start of each slot.
  while (done < hdr.count && hdr.slot >= sizeof(gn_header) && data.size() - off >= hdr.slot) {
    uint16_t kind = 0;
    std::memcpy(&kind, data.data() + off + offsetof(gn_header, kind), sizeof(kind));
    size_t size = collect::FixedRecordSize(kind);
    if (size == 0 || size > hdr.slot) break;
    OnOne(cpu, b, data.subspan(off, size), true, hdr.stream);
    off += hdr.slot;
    ++done;
  }
  // What the walk could not split (an unknown kind, a short tail).
  b.decode_errors += static_cast<uint64_t>(hdr.count - done);
  b.staging.EndBatch(hdr.hdr.ts, hdr.stream);
}

void RecordIntake::OnOne(uint32_t cpu, CpuBatch& b, std::span<const uint8_t> data, bool batched, uint32_t stream) {
  uint16_t kind = 0;
  if (data.size() >= sizeof(gn_header)) std::memcpy(&kind, data.data() + offsetof(gn_header, kind), sizeof(kind));
  // Decoded in place; a softirq slice is two events, the entry first:
  // nothing else was recorded on this CPU between them (bpf/irq.bpf.c).
  std::span<model::Event, 2> slots = b.staging.Slots();
  collect::DecodeResult result;
  size_t n = collect::DecodeRecordEvents(data, cpu, slots, &result);
  if (n == 0) {
    ++b.decode_errors;
    return;
  }
  uint64_t events = 0;
  for (size_t i = 0; i < n; ++i) {
    events += EventsInTrace(slots[i]);
    b.staging.Push(batched, stream, i + 1 < n);
  }
  b.events_total += events;
  b.bytes_total += data.size();
  int owner = OwnerOf(kind);
  if (owner >= 0 && static_cast<size_t>(owner) < b.collector_events.size())
    b.collector_events[static_cast<size_t>(owner)] += events;
  if (pid_ns_map_ && (kind == GN_REC_PROCESS_FORK || kind == GN_REC_PROCESS_EXIT)) {
    std::lock_guard lock(pid_ns_mu_);
    LearnPidNs(kind, data);
  }
}

void RecordIntake::LearnPidNs(uint16_t kind, std::span<const uint8_t> data) {
  if (kind == GN_REC_PROCESS_EXIT) {
    gn_header hdr;
    std::memcpy(&hdr, data.data(), sizeof(hdr));
    pid_ns_map_->EndTask(static_cast<int32_t>(hdr.tid), hdr.ts);
    return;
  }
  if (data.size() < sizeof(gn_process_fork)) return;  // counted as a decode error above
  gn_process_fork r;
  std::memcpy(&r, data.data(), sizeof(r));
  if (r.ns_level == GN_PIDNS_UNKNOWN) {
    ++pid_ns_unknown_forks_;
    return;
  }
  if (r.ns_level == 0 || r.ns_count == 0) return;
  model::PidNsChain chain;
  chain.level = r.ns_level;
  chain.count = std::min<uint32_t>(r.ns_count, GN_PIDNS_LEVELS);
  for (uint32_t i = 0; i < chain.count; ++i)
    chain.at[i] = model::PidNsIds{r.ns[i].inum, r.ns[i].level, static_cast<int32_t>(r.ns[i].tid),
                                  static_cast<int32_t>(r.ns[i].tgid)};
  pid_ns_map_->AddTask(static_cast<int32_t>(r.child_tid), static_cast<int32_t>(r.child_tgid), chain,
                       r.hdr.ts);
}

}  // namespace gpunoise::record
