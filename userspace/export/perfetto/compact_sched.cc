#include "export/perfetto/compact_sched.h"

#include <cstring>
#include <type_traits>

#include "common/proto_wire.h"

#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::perfetto {

uint32_t CompactSchedBuilder::Intern(const model::TaskComm& comm) {
  for (const Recent& r : recent_)
    if (r.index != UINT32_MAX && r.comm == comm) return r.index;
  CommKey key;
  std::string_view v = comm.view();
  char bytes[16] = {};
  std::memcpy(bytes, v.data(), v.size());
  std::memcpy(&key.lo, bytes, 8);
  std::memcpy(&key.hi, bytes + 8, 8);
  auto [it, inserted] = intern_index_.try_emplace(key, static_cast<uint32_t>(intern_order_.size()));
  if (inserted) intern_order_.push_back(comm);
  recent_[recent_next_++ % recent_.size()] = {comm, it->second};
  return it->second;
}

void CompactSchedBuilder::AddSwitch(uint64_t ts, const model::SchedSwitch& e) {
  switch_ts_.push_back(ts - last_switch_ts_);
  last_switch_ts_ = ts;
  switch_prev_state_.push_back(e.prev_state);
  switch_next_pid_.push_back(e.next_tid);
  switch_next_prio_.push_back(e.next_prio);
  switch_next_comm_.push_back(Intern(e.next_comm));
}

void CompactSchedBuilder::AddWaking(uint64_t ts, const model::SchedWaking& e, uint16_t common_flags) {
  waking_ts_.push_back(ts - last_waking_ts_);
  last_waking_ts_ = ts;
  waking_pid_.push_back(e.tid);
  waking_target_cpu_.push_back(e.target_cpu);
  waking_prio_.push_back(e.prio);
  waking_comm_.push_back(Intern(e.comm));
  waking_flags_.push_back(common_flags);
}

namespace {

// One packed repeated field; signed values are sign-extended to 64 bits, as
// protobuf encodes int32 and int64.
// Varints go straight into the output's buffer, sized for the worst case
// first: this runs for every context switch recorded.
template <typename T>
void Packed(ProtoWriter& w, uint32_t field, std::vector<T>& values) {
  if (values.empty()) return;
  size_t token = w.BeginMessage(field);
  std::string& out = *w.out();
  size_t at = out.size();
  out.resize(at + values.size() * 10);
  char* p = out.data() + at;
  for (T v : values) {
    uint64_t u = std::is_signed_v<T> ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
    while (u >= 0x80) {
      *p++ = static_cast<char>((u & 0x7f) | 0x80);
      u >>= 7;
    }
    *p++ = static_cast<char>(u);
  }
  out.resize(static_cast<size_t>(p - out.data()));
  w.EndMessage(token);
  values.clear();
}

}  // namespace

void CompactSchedBuilder::FlushTo(ProtoWriter& w) {
  using M = pf::FtraceEventBundle::CompactSched;
  for (const auto& comm : intern_order_) w.Bytes(M::kInternTable, comm.view());
  Packed(w, M::kSwitchTimestamp, switch_ts_);
  Packed(w, M::kSwitchPrevState, switch_prev_state_);
  Packed(w, M::kSwitchNextPid, switch_next_pid_);
  Packed(w, M::kSwitchNextPrio, switch_next_prio_);
  Packed(w, M::kSwitchNextCommIndex, switch_next_comm_);
  Packed(w, M::kWakingTimestamp, waking_ts_);
  Packed(w, M::kWakingPid, waking_pid_);
  Packed(w, M::kWakingTargetCpu, waking_target_cpu_);
  Packed(w, M::kWakingPrio, waking_prio_);
  Packed(w, M::kWakingCommIndex, waking_comm_);
  Packed(w, M::kWakingCommonFlags, waking_flags_);
  intern_index_.clear();
  intern_order_.clear();
  recent_.fill({});
  last_switch_ts_ = 0;
  last_waking_ts_ = 0;
}

}  // namespace gpunoise::perfetto
