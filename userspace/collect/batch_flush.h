// Flushes a collector's per-CPU record batches (bpf/batch.bpf.h) from user
// space: its flush program runs on each CPU in turn (BPF_PROG_TEST_RUN with
// BPF_F_TEST_RUN_ON_CPU; an IPI to every CPU but the caller's), and writes
// what that CPU's batch holds, or an empty batch whose timestamp tells the
// intake that nothing older is still waiting in the kernel.
#pragma once

#include <cstdint>
#include <vector>

namespace gpunoise::collect {

class BatchFlusher {
 public:
  // `prog_fd`: the loaded flush program (owned by its collector's skeleton).
  BatchFlusher(int prog_fd, std::vector<int> cpus) : prog_fd_(prog_fd), cpus_(std::move(cpus)) {}

  // Flushes every CPU once. Returns the CPUs whose batch could not be
  // flushed now (a record half-written, the run refused); their batch goes
  // with a later flush, and the intake holds back until then.
  uint64_t FlushAll();
  // Flushes until every CPU's batch is out, at most `attempts` rounds: for
  // the end, when the programs are detached and no record can stay
  // half-written. Returns the CPUs still not flushed.
  uint64_t FlushAllUntilDone(int attempts = 5);

  uint64_t busy() const { return busy_; }  // refused flushes so far

 private:
  bool FlushOne(int cpu);

  int prog_fd_;
  std::vector<int> cpus_;
  uint64_t busy_ = 0;
};

}  // namespace gpunoise::collect
