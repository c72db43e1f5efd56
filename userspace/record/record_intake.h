// Where ring records arrive during a recording: each is decoded into its
// CPU's staging and counted per CPU and per collector; what cannot be decoded
// or comes from a CPU outside the recording is counted, never dropped
// silently (DESIGN.md decision 3).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "record/cpu_staging.h"

extern "C" {
#include "bpf/record.h"
}

namespace gpunoise::model {
class PidNsMap;
}

namespace gpunoise::record {

// One CPU's records on their way to the trace, and what became of them.
struct CpuBatch {
  CpuStaging staging;
  uint64_t drained = 0;  // records read in the current drain pass
  uint64_t lost_seen = 0;
  uint64_t events_total = 0;
  uint64_t bytes_total = 0;
  // Events by collector (its index in the session's list): per CPU, so that
  // drain lanes count without sharing a line (RecordIntake sums them).
  std::vector<uint64_t> collector_events;
  uint64_t decode_errors = 0;
  uint64_t unwritten = 0;
  std::map<std::string, uint64_t> unwritten_by_kind;
  // Batches (bpf/batch.bpf.h) read from this CPU's ring, and the records
  // their sequence numbers say are missing between them: batches the ring
  // had no room for, which the kernel counted lost by kind.
  uint64_t batches = 0;
  uint64_t batch_seq_missing = 0;
  // Per stream: the first_seq its next batch should have (0 before any).
  std::array<uint64_t, CpuStaging::kMaxStreams> next_batch_seq{};

  // Events the trace file could not take: lost in user space, by kind.
  void CountUnwritten(std::string_view kind, uint64_t n) {
    unwritten += n;
    unwritten_by_kind[std::string(kind)] += n;
  }
  void CountUnwritten(model::EventView events) {
    for (const model::Event& e : events) CountUnwritten(model::EventName(e), 1);
  }
};

class RecordIntake {
 public:
  // CPUs 0..max_cpu have a staging each.
  explicit RecordIntake(size_t max_cpu);

  // Records of `kind` belong to collector number `collector` (its index in
  // the session's list), for per-collector counts.
  void SetOwner(uint16_t kind, size_t collector);
  int OwnerOf(uint16_t kind) const { return kind < owners_.size() ? owners_[kind] : -1; }

  // The ring transport's handler: one record from CPU `cpu`'s ring. A batch
  // (GN_REC_BATCH) is unpacked into the records it holds, which are staged
  // and counted as if each had come alone. Drain lanes call it for
  // different CPUs at once: what it shares between CPUs is atomic or locked.
  void OnRecord(uint32_t cpu, std::span<const uint8_t> data);

  // Collectors batch records, in the streams of `stream_mask` (bit s: enum
  // gn_batch_stream s): every CPU's staging holds back for their batches
  // (record/cpu_staging.h). 0: none does.
  void set_batching(uint32_t stream_mask) {
    for (CpuBatch& b : batches_) b.staging.set_batching(stream_mask);
  }

  std::vector<CpuBatch>& batches() { return batches_; }
  const std::vector<CpuBatch>& batches() const { return batches_; }
  uint64_t records_outside_cpus() const { return records_outside_cpus_; }
  uint64_t collector_events(size_t collector) const;
  // Fork and exit records also teach `map` which host task has which ids
  // inside pid namespaces (bpf/sched.h gn_process_fork.ns). Drain lanes
  // read the pointer as records come in: set it before the first drain.
  void set_pid_ns_map(model::PidNsMap* map) { pid_ns_map_ = map; }
  // Forks whose namespaces the program could not read (classic twin).
  uint64_t pid_ns_unknown_forks() const { return pid_ns_unknown_forks_; }

 private:
  void LearnPidNs(uint16_t kind, std::span<const uint8_t> data);
  // `batched`: it came out of a batch of `stream`.
  void OnOne(uint32_t cpu, CpuBatch& b, std::span<const uint8_t> data, bool batched, uint32_t stream = 0);
  void OnBatch(uint32_t cpu, CpuBatch& b, std::span<const uint8_t> data);

  std::vector<CpuBatch> batches_;
  std::array<int8_t, GN_REC_KIND_MAX> owners_;
  size_t collectors_ = 0;
  std::atomic<uint64_t> records_outside_cpus_{0};
  model::PidNsMap* pid_ns_map_ = nullptr;
  std::mutex pid_ns_mu_;  // the map, from every lane
  std::atomic<uint64_t> pid_ns_unknown_forks_{0};
};

}  // namespace gpunoise::record
