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
#include <span>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

struct ring_buffer;

namespace gpunoise::collect {

class RingTransport {
 public:
  // Called for each record, on the draining thread.
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
  uint64_t bytes_per_cpu() const { return bytes_per_cpu_; }
  // Bytes of fill at which producers force a wakeup.
  uint64_t wakeup_bytes() const;
  // An fd that becomes readable when a producer forces a wakeup (epoll).
  int wait_fd() const;

  // Reads everything currently in every ring. Returns records consumed.
  Result<uint64_t> DrainAll();

 private:
  RingTransport() = default;
  struct CpuContext {
    RingTransport* self;
    uint32_t cpu;
  };
  static int OnRecord(void* ctx, void* data, size_t size);

  RecordHandler handler_;
  uint64_t bytes_per_cpu_ = 0;
  UniqueFd outer_fd_;
  std::vector<UniqueFd> ring_fds_;
  std::vector<std::unique_ptr<CpuContext>> contexts_;
  ring_buffer* consumer_ = nullptr;
};

}  // namespace gpunoise::collect
