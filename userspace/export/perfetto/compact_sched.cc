#include "export/perfetto/compact_sched.h"

#include <cstring>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {

uint32_t CompactSchedBuilder::Intern(const model::TaskComm& comm) {
  CommKey key;
  std::string_view v = comm.view();
  char bytes[16] = {};
  std::memcpy(bytes, v.data(), v.size());
  std::memcpy(&key.lo, bytes, 8);
  std::memcpy(&key.hi, bytes + 8, 8);
  auto [it, inserted] = intern_index_.try_emplace(key, static_cast<uint32_t>(intern_order_.size()));
  if (inserted) intern_order_.push_back(comm);
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

void CompactSchedBuilder::AddWaking(uint64_t ts, const model::SchedWaking& e) {
  waking_ts_.push_back(ts - last_waking_ts_);
  last_waking_ts_ = ts;
  waking_pid_.push_back(e.tid);
  waking_target_cpu_.push_back(e.target_cpu);
  waking_prio_.push_back(e.prio);
  waking_comm_.push_back(Intern(e.comm));
}

namespace {
template <typename Field, typename T>
void Assign(Field* field, std::vector<T>& values) {
  field->Reserve(static_cast<int>(values.size()));
  for (T v : values) field->AddAlreadyReserved(v);
  values.clear();
}
}  // namespace

void CompactSchedBuilder::FlushTo(FtraceEventBundle_CompactSched* out) {
  for (const auto& comm : intern_order_) {
    std::string_view v = comm.view();
    out->add_intern_table(v.data(), v.size());
  }
  Assign(out->mutable_switch_timestamp(), switch_ts_);
  Assign(out->mutable_switch_prev_state(), switch_prev_state_);
  Assign(out->mutable_switch_next_pid(), switch_next_pid_);
  Assign(out->mutable_switch_next_prio(), switch_next_prio_);
  Assign(out->mutable_switch_next_comm_index(), switch_next_comm_);
  Assign(out->mutable_waking_timestamp(), waking_ts_);
  Assign(out->mutable_waking_pid(), waking_pid_);
  Assign(out->mutable_waking_target_cpu(), waking_target_cpu_);
  Assign(out->mutable_waking_prio(), waking_prio_);
  Assign(out->mutable_waking_comm_index(), waking_comm_);
  intern_index_.clear();
  intern_order_.clear();
  last_switch_ts_ = 0;
  last_waking_ts_ = 0;
}

}  // namespace gpunoise::perfetto
