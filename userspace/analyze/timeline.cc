#include "analyze/timeline.h"

#include <fmt/format.h>

#include "model/events.h"

namespace gpunoise::analyze {

bool IsRunnableState(int32_t state) {
  // Sleeping states are the low bits (S=1, D=2, T=4, t=8, X=16, Z=32, P=64,
  // I=128); TASK_REPORT_MAX (0x100 on Linux >= 4.14) and 0 are runnable.
  return state >= 0 && (state & 0xff) == 0;
}

bool IsPreemptedState(int32_t state) { return IsRunnableState(state) && state != 0; }

std::string_view StateName(int32_t state) {
  if (state == kStateUnknown) return "?";
  if (state == kStateStillRunning) return "running";
  if (state == 0) return "R";
  if (IsPreemptedState(state)) return "R+";
  static constexpr std::string_view kNames[] = {"S", "D", "T", "t", "X", "Z", "P", "I"};
  for (int bit = 0; bit < 8; ++bit)
    if (state & (1 << bit)) return kNames[bit];
  return "?";
}

int32_t VectorIrqId(uint32_t vector_kind) { return -1 - static_cast<int32_t>(vector_kind); }

std::string TrackData::TrackPath(uint64_t uuid) const {
  std::string path;
  for (int depth = 0; depth < 16 && uuid; ++depth) {
    auto it = tracks.find(uuid);
    if (it == tracks.end()) break;
    if (!it->second.name.empty()) path = path.empty() ? it->second.name : it->second.name + " / " + path;
    uuid = it->second.parent_uuid;
  }
  return path;
}

const ThreadInfo* Timeline::Thread(int32_t tid) const {
  if (tid < 0) return nullptr;
  if (static_cast<size_t>(tid) > kDenseTidLimit) {
    auto it = sparse_thread_slot.find(tid);
    return it == sparse_thread_slot.end() ? nullptr : &thread_store[it->second - 1];
  }
  if (static_cast<size_t>(tid) >= thread_slot.size()) return nullptr;
  uint32_t slot = thread_slot[static_cast<size_t>(tid)];
  return slot ? &thread_store[slot - 1] : nullptr;
}

ThreadInfo& Timeline::MutableThread(int32_t tid) {
  size_t index = static_cast<size_t>(tid < 0 ? 0 : tid);
  uint32_t* slot_ptr;
  if (index > kDenseTidLimit) {
    slot_ptr = &sparse_thread_slot[tid];
  } else {
    if (index >= thread_slot.size())
      thread_slot.resize(std::min(std::max(index + 1, thread_slot.size() * 2), kDenseTidLimit + 1), 0);
    slot_ptr = &thread_slot[index];
  }
  uint32_t& slot = *slot_ptr;
  if (!slot) {
    thread_store.push_back(ThreadInfo{tid, 0, {}});
    slot = static_cast<uint32_t>(thread_store.size());
  }
  return thread_store[slot - 1];
}

std::vector<int32_t> Timeline::AllThreads() const {
  std::vector<int32_t> out;
  out.reserve(thread_store.size());
  for (const auto& t : thread_store) out.push_back(t.tid);
  return out;
}

std::string Timeline::ThreadName(int32_t tid) const {
  if (tid == 0) return "idle";
  const ThreadInfo* t = Thread(tid);
  if (t && !t->name.empty()) return t->name;
  return fmt::format("tid {}", tid);
}

int32_t Timeline::TgidOf(int32_t tid) const {
  const ThreadInfo* t = Thread(tid);
  return t && t->tgid ? t->tgid : tid;
}

std::string Timeline::ProcessName(int32_t tgid) const {
  auto it = processes.find(tgid);
  if (it != processes.end() && !it->second.name.empty()) return it->second.name;
  return ThreadName(tgid);
}

bool Timeline::IsKernelThread(int32_t tid) const {
  if (tid <= 0) return true;
  const ThreadInfo* t = Thread(tid);
  int32_t tgid = t && t->tgid ? t->tgid : tid;
  auto it = processes.find(tgid);
  if (it != processes.end()) return it->second.is_kthread;
  // No process record (Perfetto's recorder without process scraping): the
  // names the kernel gives its own threads.
  std::string_view name = t ? std::string_view(t->name) : std::string_view();
  static constexpr std::string_view kPrefixes[] = {
      "kworker/", "ksoftirqd/", "migration/", "rcu_", "rcuc/", "rcuop/", "kthreadd", "cpuhp/",
      "idle_inject/", "watchdog/", "irq/", "kswapd", "kcompactd", "khugepaged", "jbd2/",
      "swapper", "kauditd", "oom_reaper", "writeback", "kblockd", "ksmd", "kintegrityd"};
  for (auto p : kPrefixes)
    if (name.substr(0, p.size()) == p) return true;
  return false;
}

std::string Timeline::DescribeThread(int32_t tid) const {
  if (tid == 0) return "idle";
  int32_t tgid = TgidOf(tid);
  std::string where = DescribeWhere(tid);
  if (!where.empty()) where = ", " + where;
  if (tgid != tid)
    return fmt::format("{} (tid {}, pid {} {}{})", ThreadName(tid), tid, tgid, ProcessName(tgid), where);
  return fmt::format("{} (pid {}{})", ThreadName(tid), tid, where);
}

const model::ProcessIdentity* Timeline::IdentityOf(int32_t tid) const {
  if (identities.empty()) return nullptr;
  auto it = identities.find(TgidOf(tid));
  return it == identities.end() ? nullptr : &it->second;
}

std::string Timeline::DescribeWhere(int32_t tid) const {
  const model::ProcessIdentity* id = IdentityOf(tid);
  if (!id) return {};
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  const model::ContainerIdentity& c = id->container;
  if (!c.pod_name.empty()) add(c.pod_namespace.empty() ? "pod " + c.pod_name : "pod " + c.pod_namespace + "/" + c.pod_name);
  else if (!c.pod_uid.empty()) add("pod-uid " + c.pod_uid);
  if (!c.container_name.empty()) add("container " + c.container_name);
  else if (!c.container_id.empty()) add("container " + c.container_id.substr(0, 12));
  if (id->job.rank) add(fmt::format("rank {}", *id->job.rank));
  if (!id->job.job_id.empty()) add("job " + id->job.job_id);
  return out;
}

std::string Timeline::IrqName(int32_t id) const {
  if (id < 0) return std::string(model::VectorName(static_cast<model::VectorKind>(-1 - id)));
  auto it = irq_names.find(id);
  if (it != irq_names.end() && !it->second.empty()) return fmt::format("{} (irq {})", it->second, id);
  return fmt::format("irq {}", id);
}

}  // namespace gpunoise::analyze
