#include "record/record_intake.h"

#include <cstddef>
#include <algorithm>
#include <cstring>

#include "collect/record_decoder.h"
#include "collect/records.h"
#include "model/pid_ns_map.h"

namespace gpunoise::record {

RecordIntake::RecordIntake(size_t max_cpu) : batches_(max_cpu + 1) { owners_.fill(-1); }

void RecordIntake::SetOwner(uint16_t kind, size_t collector) {
  if (kind >= owners_.size()) return;
  owners_[kind] = static_cast<int8_t>(collector);
  if (collector_events_.size() <= collector) collector_events_.resize(collector + 1, 0);
}

void RecordIntake::OnRecord(uint32_t cpu, std::span<const uint8_t> data) {
  if (cpu >= batches_.size()) {
    ++records_outside_cpus_;
    return;
  }
  CpuBatch& b = batches_[cpu];
  ++b.drained;
  if (collect::DecodeRecord(data, cpu, &b.staging.Slot()) != collect::DecodeResult::kOk) {
    ++b.decode_errors;
    return;
  }
  b.staging.Push();
  ++b.events_total;
  b.bytes_total += data.size();
  uint16_t kind = 0;
  std::memcpy(&kind, data.data() + offsetof(gn_header, kind), sizeof(kind));
  int owner = OwnerOf(kind);
  if (owner >= 0) ++collector_events_[static_cast<size_t>(owner)];
  if (pid_ns_map_ && (kind == GN_REC_PROCESS_FORK || kind == GN_REC_PROCESS_EXIT))
    LearnPidNs(kind, data);
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
