// The kernel-to-user transport: one BPF ring buffer per traced CPU, in an
// ARRAY_OF_MAPS indexed by CPU that every collector object shares.
//
// Per-CPU rings keep producers on different CPUs off each other's cache lines
// and make per-CPU order (and per-CPU loss) explicit. Producers submit without
// waking us (bpf/common.bpf.h); we wake when a ring crosses its wakeup mark or
// when the drain timer fires, and then drain every ring in one pass.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

struct ring_buffer;

namespace gpunoise {
class ForkJoin;
}

namespace gpunoise::collect {

struct CollectorContext;

class RingTransport {
 public:
  // Called for each record, on the draining thread: with drain lanes
  // (DrainAll's `lanes`), on the lane's thread, for its CPUs alone; one
  // CPU's records always come on one thread at a time, in ring order.
  using RecordHandler = std::function<void(uint32_t cpu, std::span<const uint8_t> record)>;

  // `cpus`: the CPUs to create rings for. `bytes_per_cpu` is rounded up to a
  // power of two of at least one page.
  static Result<std::unique_ptr<RingTransport>> Create(const std::vector<int>& cpus,
                                                       uint64_t bytes_per_cpu,
                                                       RecordHandler handler);
  ~RingTransport();
  RingTransport(const RingTransport&) = delete;
  RingTransport& operator=(const RingTransport&) = delete;

  int outer_map_fd() const { return outer_fd_.get(); }
  // The gate every producer checks first (gn_gate in bpf/common.bpf.h);
  // collectors share it like the rings. Open when created.
  int gate_map_fd() const { return gate_fd_.get(); }
  // Closes or opens the gate: one write that stops or starts every producer
  // sharing it at once. Records already in the rings stay there to be drained.
  Status Pause();
  Status Resume();
  // Records the kernel could not store (ring full, or no ring for the CPU)
  // per CPU and record kind, cumulative (gn_lost_kinds in bpf/common.bpf.h):
  // shared like the gate, so this is every collector's ring loss.
  int lost_map_fd() const { return lost_fd_.get(); }
  // Each CPU's interrupt state, kept by the irq collector for every
  // collector's records (gn_cpu_ctx in bpf/common.bpf.h).
  int cpu_context_map_fd() const { return cpu_ctx_fd_.get(); }
  // The drain's doorbell (bpf/doorbell.bpf.h), which producers ring when
  // their CPU's ring crosses half full or its log is half full and unread.
  int doorbell_map_fd() const { return doorbell_fd_.get(); }
  // The fds above, for a CollectorContext.
  void ShareWith(CollectorContext* context) const;
  // lost[cpu][kind] for every possible CPU; empty on a read error.
  std::vector<std::vector<uint64_t>> LostByCpuAndKind() const;
  // The same summed per CPU (indexed by CPU, every possible CPU), from the
  // total the producers keep beside the kinds: one key to read.
  std::vector<uint64_t> LostPerCpu() const;
  uint64_t bytes_per_cpu() const { return bytes_per_cpu_; }
  // Bytes of fill at which producers force a wakeup.
  uint64_t wakeup_bytes() const;
  // An fd that becomes readable when a producer forces a wakeup (epoll),
  // until the next DrainAll.
  int wait_fd() const;

  // Reads every ring: everything in it, or, with `max_records_per_cpu`, at
  // most that many events from each (a batch record counts the records it
  // holds, collect/records.h EventsInRingRecord). Under a storm the
  // producers refill a ring as fast as it is read, so an unbounded drain of
  // a busy ring may never end; the bound keeps each drain's staging small
  // and lets the caller write and come back (backlog() says whether it
  // should at once). Returns the events consumed. With `lanes`, lane k reads
  // the rings k, k + K, k + 2K, ... (K lanes) beside the others.
  Result<uint64_t> DrainAll(uint64_t max_records_per_cpu = 0, ForkJoin* lanes = nullptr);
  // True when the last bounded drain left records behind in some ring.
  bool backlog() const { return backlog_; }
  // When the last drain began: the bytes the fullest ring held, and the
  // most bytes one ring's producers had written since the drain before
  // (records with their headers; 0 where the positions could not be read).
  uint64_t fullest_ring_bytes() const { return fullest_ring_bytes_; }
  uint64_t most_produced_bytes() const { return most_produced_bytes_; }

 private:
  RingTransport() = default;
  struct CpuContext {
    RingTransport* self = nullptr;
    uint32_t cpu = 0;
    uint64_t budget = 0;  // events left in this drain (a batch counts what it holds); 0: unbounded
    uint64_t events = 0;  // consumed in this drain
    // The ring's consumer and producer positions, mapped read-only
    // (libbpf 1.1 does not expose its own mapping); null: not mapped.
    const uint64_t* consumer_pos = nullptr;
    const uint64_t* producer_pos = nullptr;
    uint64_t producer_seen = 0;  // producer_pos at the drain before
    ~CpuContext();
  };
  struct ConsumerDeleter {
    void operator()(ring_buffer* rb) const;
  };
  static int OnRecord(void* ctx, void* data, size_t size);
  // Reads rings first, first + step, ...; what DrainAll reports of them.
  struct LaneRead {
    uint64_t events = 0;
    bool backlog = false;
    std::optional<Error> error;
  };
  LaneRead ReadRings(size_t first, size_t step, uint64_t max_records_per_cpu);
  void TakeWakeups();

  RecordHandler handler_;
  uint64_t bytes_per_cpu_ = 0;
  UniqueFd outer_fd_;
  UniqueFd gate_fd_;
  UniqueFd lost_fd_;
  UniqueFd cpu_ctx_fd_;
  UniqueFd doorbell_fd_;
  int possible_cpus_ = 0;
  std::vector<UniqueFd> ring_fds_;
  std::vector<std::unique_ptr<CpuContext>> contexts_;
  // One libbpf consumer per ring (libbpf 1.1 has no per-ring consume): a
  // consume that stops early at one ring's budget must not skip the rings
  // after it. Their epoll fds are gathered in epoll_fd_.
  std::vector<std::unique_ptr<ring_buffer, ConsumerDeleter>> consumers_;
  UniqueFd epoll_fd_;
  bool backlog_ = false;
  uint64_t fullest_ring_bytes_ = 0;
  uint64_t most_produced_bytes_ = 0;
};

}  // namespace gpunoise::collect
