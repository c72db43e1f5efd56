// An independent count of one process's context switches and wakings
// (tests/integration/sched_oracle.bpf.c), to check a trace's events plus its
// counted loss against.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

struct sched_oracle_bpf;

namespace gpunoise::testing {

class SchedOracle {
 public:
  // Counts from now on. `gate_fd` >= 0: only while that recording's gate is
  // open (FindRecordingGate).
  static std::unique_ptr<SchedOracle> Start(pid_t tgid, int gate_fd, std::string* error);
  ~SchedOracle();
  SchedOracle(const SchedOracle&) = delete;
  SchedOracle& operator=(const SchedOracle&) = delete;

  // Detaches: the counts stop moving.
  void Stop();
  // Per CPU: switches whose prev or next is of the process; wakings of its
  // threads (on the waker's CPU); per thread: its switch-ins.
  std::map<uint32_t, uint64_t> SwitchesPerCpu() const;
  std::map<uint32_t, uint64_t> WakingsPerCpu() const;
  std::map<int32_t, uint64_t> SwitchInsPerThread() const;
  // Tasks of other processes that took the CPU from one of its threads, with
  // how often.
  std::map<int32_t, uint64_t> SuccessorsPerThread() const;

 private:
  explicit SchedOracle(sched_oracle_bpf* skel) : skel_(skel) {}
  sched_oracle_bpf* skel_;
};

// A duplicate of the recording gate map (gn_gate) that process `pid` holds,
// or -1 when it holds none.
int FindRecordingGate(pid_t pid);

}  // namespace gpunoise::testing
