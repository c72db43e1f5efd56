// Perfetto's compact sched encoding: sched_switch and sched_waking as packed
// columns with delta-encoded timestamps and an interned comm table, as
// Perfetto's own recorder writes them (~8 bytes per event instead of ~40).
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/events.h"

namespace gpunoise {
class ProtoWriter;
}

namespace gpunoise::perfetto {

class CompactSchedBuilder {
 public:
  // Timestamps must be non-decreasing per kind (deltas are unsigned).
  void AddSwitch(uint64_t ts, const model::SchedSwitch& e);
  // `common_flags`: ftrace's context bits of the waking (model::kFlag*),
  // which Perfetto's thread_state turns into irq_context.
  void AddWaking(uint64_t ts, const model::SchedWaking& e, uint16_t common_flags);

  bool empty() const { return switch_ts_.empty() && waking_ts_.empty(); }
  size_t size() const { return switch_ts_.size() + waking_ts_.size(); }
  size_t interned_comms() const { return intern_order_.size(); }

  // Writes the columns as the fields of a CompactSched message (the caller
  // frames it) and resets the builder.
  void FlushTo(ProtoWriter& out);

 private:
  uint32_t Intern(const model::TaskComm& comm);

  struct CommKey {
    uint64_t lo, hi;
    bool operator==(const CommKey& o) const { return lo == o.lo && hi == o.hi; }
  };
  struct CommKeyHash {
    size_t operator()(const CommKey& k) const { return k.lo * 0x9E3779B97F4A7C15ull ^ k.hi; }
  };
  std::unordered_map<CommKey, uint32_t, CommKeyHash> intern_index_;
  std::vector<model::TaskComm> intern_order_;
  // The last comms interned, compared whole before the hash: a switch-heavy
  // CPU goes back and forth between a few tasks, and the map's lookup was a
  // fifth of the recorder's CPU under a pipe storm.
  struct Recent {
    model::TaskComm comm;
    uint32_t index = UINT32_MAX;  // UINT32_MAX: empty
  };
  std::array<Recent, 4> recent_{};
  uint32_t recent_next_ = 0;

  uint64_t last_switch_ts_ = 0;
  std::vector<uint64_t> switch_ts_;
  std::vector<int64_t> switch_prev_state_;
  std::vector<int32_t> switch_next_pid_;
  std::vector<int32_t> switch_next_prio_;
  std::vector<uint32_t> switch_next_comm_;

  uint64_t last_waking_ts_ = 0;
  std::vector<uint64_t> waking_ts_;
  std::vector<int32_t> waking_pid_;
  std::vector<int32_t> waking_target_cpu_;
  std::vector<int32_t> waking_prio_;
  std::vector<uint32_t> waking_comm_;
  std::vector<uint32_t> waking_flags_;
};

}  // namespace gpunoise::perfetto
