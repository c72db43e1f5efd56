// The producer side of the ring benchmarks and tests: bench/ring_fill.bpf.c
// loaded against a RingTransport's rings and gate, run with
// BPF_PROG_TEST_RUN on one CPU (never attached, so nothing else on the
// machine adds records). Used by bench/ring_consume_benchmark.cc and
// tests/integration/ring_drain_test.cc.
#pragma once

#include <cstdint>
#include <memory>

#include "collect/ring_transport.h"
#include "common/result.h"

struct ring_fill_bpf;

namespace gpunoise::bench {

class RingFiller {
 public:
  // Loads the program sharing `transport`'s maps; it writes on `cpu`.
  static Result<std::unique_ptr<RingFiller>> Load(const collect::RingTransport& transport, int cpu);
  ~RingFiller();
  RingFiller(const RingFiller&) = delete;
  RingFiller& operator=(const RingFiller&) = delete;

  // Runs the program to write up to `n` records; it stops at the first
  // reservation that fails (ring full, or gate closed).
  Status Run(uint32_t n);
  // Run, and an error unless all `n` were written.
  Status Fill(uint32_t n);

  // Reservations that failed in runs so far (the program stops at the first
  // of each run), and resets it.
  uint64_t failed() const;
  void reset_failed();
  // Records the kernel counted as lost on the filler's CPU (ring full).
  uint64_t lost() const;

 private:
  RingFiller(ring_fill_bpf* skel, int cpu, const collect::RingTransport& transport)
      : skel_(skel), cpu_(cpu), transport_(transport) {}
  ring_fill_bpf* skel_;
  int cpu_;
  const collect::RingTransport& transport_;
};

}  // namespace gpunoise::bench
