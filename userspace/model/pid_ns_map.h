// Host tids of tasks by their ids inside pid namespaces, with each task's
// lifetime, so an id a container reuses after its first owner exited maps to
// the task that had it at the time (DESIGN.md decision 10). Learnt from the
// kernel's fork and exit records during a recording and from /proc for the
// tasks that existed before it; asked by the recorder when it translates the
// namespace-local ids in GPU fragments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/pid_ns.h"

namespace gpunoise::model {

struct ProcessSnapshot;

class PidNsMap {
 public:
  static constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();
  // Bound on what a recording keeps (a fork bomb in a container must not
  // grow the recorder without limit); tasks past it are counted.
  static constexpr size_t kMaxTasks = 1 << 20;

  // A task of host ids (tid, tgid) in the namespaces of `chain`, alive from
  // `start_ts` (0: from before the recording).
  void AddTask(int32_t host_tid, int32_t host_tgid, const PidNsChain& chain, uint64_t start_ts);
  // Every task of `snapshot` in a namespace other than the host's (the
  // innermost namespace is the one /proc names by inode).
  void AddSnapshot(const ProcessSnapshot& snapshot);
  // The host task `host_tid` exited at `ts` (ignored for tasks not known).
  void EndTask(int32_t host_tid, uint64_t ts);

  enum class Match { kFound, kUnknown, kAmbiguous };
  // The host tid of the task that had `ns_tid` in namespace `ns` at some
  // time within [from, to] and belongs to host process `host_tgid` (0: any
  // process). More than one candidate is kAmbiguous: never a guess.
  Match HostTid(uint64_t ns, int32_t ns_tid, int32_t host_tgid, uint64_t from, uint64_t to,
                int32_t* host_tid) const;
  // The host pid of the process whose pid in `ns` is `ns_pid` within [from, to].
  Match HostPid(uint64_t ns, int32_t ns_pid, uint64_t from, uint64_t to, int32_t* host_pid) const;

  // Namespaces (inodes) with at least one task known.
  bool KnowsNamespace(uint64_t ns) const { return namespaces_.count(ns) > 0; }
  size_t tasks() const { return tasks_; }
  uint64_t tasks_over_limit() const { return over_limit_; }

 private:
  struct Life {
    int32_t host_tid = 0;
    int32_t host_tgid = 0;
    bool leader = false;  // the process's main thread: its ns tid is the ns pid
    uint64_t start = 0;
    uint64_t end = kForever;
  };
  using Key = std::pair<uint64_t, int32_t>;  // (namespace inode, id there)
  Match Find(uint64_t ns, int32_t id, int32_t host_tgid, bool leader, uint64_t from, uint64_t to,
             int32_t* out) const;

  std::map<Key, std::vector<Life>> lives_;
  // Where each host tid's current life is recorded, for EndTask.
  std::unordered_map<int32_t, std::vector<Key>> keys_of_tid_;
  std::map<uint64_t, size_t> namespaces_;
  size_t tasks_ = 0;
  uint64_t over_limit_ = 0;
};

}  // namespace gpunoise::model
