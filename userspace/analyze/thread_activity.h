// One thread's life on the CPUs: when it ran (and where), and when it was
// runnable but waiting in a run queue (and on which CPU's queue), from the
// run slices, wakeups and migrations of a Timeline.
#pragma once

#include <cstdint>
#include <set>
#include <unordered_map>
#include <vector>

#include "analyze/timeline.h"

namespace gpunoise::analyze {

struct ThreadRun {
  uint64_t start = 0, end = 0;
  uint32_t cpu = 0;
  int32_t end_state = 0;
};

struct ThreadWait {
  uint64_t start = 0, end = 0;
  uint32_t cpu = 0;               // the run queue it waited in
  bool after_preemption = false;  // else after a wakeup
};

struct ThreadActivity {
  int32_t tid = 0;
  std::vector<ThreadRun> runs;    // sorted by start
  std::vector<ThreadWait> waits;  // sorted; split where the thread migrated
  // Blocked -> running with no wakeup seen (lost, or a recorder without
  // sched_waking): the time is not counted as waiting.
  uint64_t unexplained_gaps = 0;
  uint64_t first_seen = 0, last_seen = 0;  // within the analysis window
  uint64_t observed_ns() const { return last_seen > first_seen ? last_seen - first_seen : 0; }
  uint64_t run_ns() const;
  uint64_t wait_ns() const;
};

// Activities of `tids` within [from, to).
std::unordered_map<int32_t, ThreadActivity> BuildActivities(const Timeline& t,
                                                            const std::set<int32_t>& tids,
                                                            uint64_t from, uint64_t to);

}  // namespace gpunoise::analyze
