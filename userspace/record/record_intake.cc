#include "record/record_intake.h"

#include <cstddef>
#include <cstring>

#include "collect/record_decoder.h"

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
}

}  // namespace gpunoise::record
