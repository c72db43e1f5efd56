#include "collect/batch_flush.h"

#include <bpf/bpf.h>
#include <time.h>

#include <chrono>
#include <thread>
#include <utility>

namespace gpunoise::collect {
namespace {

// The read's time is taken before the states are read, and this much
// earlier again: the records are stamped with the kernel's NMI-safe boot
// clock, this with the vDSO's, and the two are not promised to agree to the
// nanosecond, and a writer's busy mark may reach this CPU a little after
// the writer read its clock. Holding 10 us more back costs nothing.
constexpr uint64_t kClockSlackNs = 10'000;

uint64_t BoottimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

BatchFlusher::BatchFlusher(int prog_fd, std::vector<int> cpus, uint32_t stream, const gn_batch_word* words)
    : prog_fd_(prog_fd),
      cpus_(std::move(cpus)),
      stream_(stream),
      words_(words),
      flush_next_(cpus_.size(), 0),
      seen_seq_(cpus_.size(), kNoSeq) {}

bool BatchFlusher::FlushOne(int cpu) {
  ++runs_;
  // raw_tp test runs take the tracepoint's arguments; the flush reads none.
  uint64_t args[1] = {0};
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
              .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = static_cast<__u32>(cpu));
  return bpf_prog_test_run_opts(prog_fd_, &opts) == 0 && opts.retval == 1;
}

uint64_t BatchFlusher::FlushAll() {
  idle_.clear();
  uint64_t now = BoottimeNs();
  uint64_t mark = now > kClockSlackNs ? now - kClockSlackNs : 0;
  uint64_t refused = 0;
  for (size_t i = 0; i < cpus_.size(); ++i) {
    int cpu = cpus_[i];
    const gn_batch_word* w = words_ && cpu >= 0 && cpu < GN_MAX_CPUS ? &words_[cpu] : nullptr;
    if (w && !flush_next_[i]) {
      // The busy mark first: a writer marks the batch before it reads the
      // clock or the state, so a mark found clear here and a state found
      // empty after it mean that no record is waiting and any record still
      // to come is stamped after this read. Acquire: the seq read last is
      // the one the flush that emptied the state wrote, or a later one.
      bool empty = __atomic_load_n(&w->busy, __ATOMIC_ACQUIRE) == 0 && __atomic_load_n(&w->state, __ATOMIC_ACQUIRE) == 0;
      uint64_t seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
      uint64_t seen = std::exchange(seen_seq_[i], seq);
      if (empty) {
        idle_.push_back({cpu, seq, mark});
        ++skipped_;
        continue;
      }
      // A batch that filled and wrote itself since the last look needs no
      // IPI: that flush is in the ring, and the intake holds back only what
      // was stamped after it, until a later drain. A CPU in a storm then
      // gets none at all; one that goes quiet is flushed at the next drain.
      if (seen != kNoSeq && seq != seen) {
        ++self_flushed_;
        continue;
      }
    }
    flush_next_[i] = 0;
    if (!FlushOne(cpu)) ++refused;
    // After the flush: its own write moves seq too.
    if (w) seen_seq_[i] = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
  }
  busy_ += refused;
  return refused;
}

void BatchFlusher::FlushNextTime(int cpu) {
  for (size_t i = 0; i < cpus_.size(); ++i)
    if (cpus_[i] == cpu) flush_next_[i] = 1;
}

uint64_t BatchFlusher::FlushAllUntilDone(int attempts) {
  idle_.clear();
  std::vector<int> left = cpus_;
  for (int round = 0; round < attempts && !left.empty(); ++round) {
    if (round) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::vector<int> still;
    for (int cpu : left)
      if (!FlushOne(cpu)) still.push_back(cpu);
    busy_ += still.size();
    left = std::move(still);
  }
  return left.size();
}

}  // namespace gpunoise::collect
