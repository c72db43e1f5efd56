#include "collect/batch_flush.h"

#include <bpf/bpf.h>

#include <chrono>
#include <thread>

namespace gpunoise::collect {

bool BatchFlusher::FlushOne(int cpu) {
  // raw_tp test runs take the tracepoint's arguments; the flush reads none.
  uint64_t args[1] = {0};
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
              .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = static_cast<__u32>(cpu));
  return bpf_prog_test_run_opts(prog_fd_, &opts) == 0 && opts.retval == 1;
}

uint64_t BatchFlusher::FlushAll() {
  uint64_t refused = 0;
  for (int cpu : cpus_)
    if (!FlushOne(cpu)) ++refused;
  busy_ += refused;
  return refused;
}

uint64_t BatchFlusher::FlushAllUntilDone(int attempts) {
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
