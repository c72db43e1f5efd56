// Flushes a collector's per-CPU record batches (bpf/batch.bpf.h) from user
// space: its flush program runs on a CPU (BPF_PROG_TEST_RUN with
// BPF_F_TEST_RUN_ON_CPU; an IPI to any CPU but the caller's) and writes what
// that CPU's batch holds, or an empty batch whose timestamp tells the intake
// that nothing older is still waiting in the kernel.
//
// Only CPUs whose batch holds records need that call. The batch states are
// in the object's .bss (gn_batch_words), mapped into this process, so one
// read says which: a CPU whose batch is empty and idle gets no IPI. Its
// empty batch's timestamp is replaced by the time of the read (an
// IdleBatch), which holds once the intake has read the stream's batches up
// to the sequence number read with it: every record claimed after the read
// was stamped after it, and every record claimed before was in a batch
// flushed before it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

extern "C" {
#include "bpf/record.h"
}

namespace gpunoise::collect {

// A CPU found with an empty, idle batch: nothing of the stream stamped
// before `ts` (CLOCK_BOOTTIME ns) is still in that CPU's batch, once the
// intake has read the stream's batches up to `seq` (its next first_seq).
struct IdleBatch {
  int cpu = 0;
  uint64_t seq = 0;
  uint64_t ts = 0;
};

class BatchFlusher {
 public:
  // `prog_fd`: the loaded flush program, `words`: the object's mapped
  // gn_batch_words (GN_MAX_CPUS of them), both owned by the collector's
  // skeleton; without `words` every CPU is flushed each time. `stream`: the
  // object's enum gn_batch_stream.
  BatchFlusher(int prog_fd, std::vector<int> cpus, uint32_t stream = 0, const gn_batch_word* words = nullptr);

  // Flushes every CPU whose batch holds records and did not write itself
  // since the last call (a full batch does), or whose idle batch the intake
  // could not take last time (FlushNextTime); the idle ones are listed in
  // idle(). Returns the CPUs whose batch could not be flushed now (a
  // record half-written, the run refused); their batch goes with a later
  // flush, and the intake holds back until then.
  uint64_t FlushAll();
  // The CPUs the last FlushAll() found idle, in the order of `cpus`.
  std::span<const IdleBatch> idle() const { return idle_; }
  // The intake had not read up to an idle batch's seq (a batch still in the
  // ring behind an unfinished record, or lost): flush `cpu` next time, so
  // that its empty batch comes through the ring instead.
  void FlushNextTime(int cpu);
  // Flushes until every CPU's batch is out, at most `attempts` rounds: for
  // the end, when the programs are detached and no record can stay
  // half-written. Returns the CPUs still not flushed.
  uint64_t FlushAllUntilDone(int attempts = 5);

  uint32_t stream() const { return stream_; }
  uint64_t busy() const { return busy_; }        // refused flushes so far
  uint64_t runs() const { return runs_; }        // flush program runs (IPIs) so far
  uint64_t skipped() const { return skipped_; }  // CPUs found idle, not flushed, so far
  // CPUs not flushed because their batch had written itself since the last
  // look, so far.
  uint64_t self_flushed() const { return self_flushed_; }

 private:
  bool FlushOne(int cpu);

  int prog_fd_;
  std::vector<int> cpus_;
  uint32_t stream_;
  const gn_batch_word* words_;
  static constexpr uint64_t kNoSeq = ~0ull;
  std::vector<uint8_t> flush_next_;  // per position in cpus_
  std::vector<uint64_t> seen_seq_;   // per position: seq after the last look, or kNoSeq
  std::vector<IdleBatch> idle_;
  uint64_t busy_ = 0;
  uint64_t runs_ = 0;
  uint64_t skipped_ = 0;
  uint64_t self_flushed_ = 0;
};

}  // namespace gpunoise::collect
