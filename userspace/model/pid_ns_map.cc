#include "model/pid_ns_map.h"

#include "model/process_snapshot.h"

namespace gpunoise::model {

void PidNsMap::AddTask(int32_t host_tid, int32_t host_tgid, const PidNsChain& chain,
                       uint64_t start_ts) {
  if (chain.count == 0) return;
  if (tasks_ >= kMaxTasks) {
    ++over_limit_;
    return;
  }
  ++tasks_;
  std::vector<Key>& keys = keys_of_tid_[host_tid];
  keys.clear();  // a reused host tid: its earlier life has ended (exit seen or not)
  for (uint32_t i = 0; i < chain.count && i < chain.at.size(); ++i) {
    const PidNsIds& ids = chain.at[i];
    if (ids.inum == 0) continue;
    Key key{ids.inum, ids.tid};
    Life life{host_tid, host_tgid, host_tid == host_tgid && ids.tid == ids.tgid, start_ts, kForever};
    lives_[key].push_back(life);
    keys.push_back(key);
    ++namespaces_[ids.inum];
  }
}

void PidNsMap::AddSnapshot(const ProcessSnapshot& snapshot) {
  std::unordered_map<int32_t, const ProcessInfo*> by_pid;
  for (const ProcessInfo& p : snapshot.processes)
    if (p.identity.pid_ns && p.identity.nspid.size() > 1) by_pid[p.pid] = &p;
  for (const ThreadInfo& t : snapshot.threads) {
    auto it = by_pid.find(t.tgid);
    if (it == by_pid.end() || t.nstid.size() < 2) continue;
    const ProcessIdentity& id = it->second->identity;
    // A task already known from its fork record keeps that life.
    auto known = keys_of_tid_.find(t.tid);
    if (known != keys_of_tid_.end() && !known->second.empty()) continue;
    PidNsChain chain;
    chain.level = static_cast<uint32_t>(t.nstid.size() - 1);
    chain.count = 1;
    chain.at[0] = PidNsIds{id.pid_ns, chain.level, t.nstid.back(), id.nspid.back()};
    AddTask(t.tid, t.tgid, chain, 0);
  }
}

void PidNsMap::EndTask(int32_t host_tid, uint64_t ts) {
  auto it = keys_of_tid_.find(host_tid);
  if (it == keys_of_tid_.end()) return;
  for (const Key& key : it->second) {
    auto lives = lives_.find(key);
    if (lives == lives_.end()) continue;
    for (auto l = lives->second.rbegin(); l != lives->second.rend(); ++l) {
      if (l->host_tid == host_tid && l->end == kForever) {
        l->end = ts;
        break;
      }
    }
  }
  keys_of_tid_.erase(it);
}

PidNsMap::Match PidNsMap::Find(uint64_t ns, int32_t id, int32_t host_tgid, bool leader,
                               uint64_t from, uint64_t to, int32_t* out) const {
  auto it = lives_.find(Key{ns, id});
  if (it == lives_.end()) return Match::kUnknown;
  int found = 0;
  for (const Life& l : it->second) {
    if (host_tgid && l.host_tgid != host_tgid) continue;
    if (leader && !l.leader) continue;
    if (l.start > to || l.end < from) continue;  // not alive within [from, to]
    if (found && *out == l.host_tid) continue;
    *out = l.host_tid;
    ++found;
  }
  if (found == 0) return Match::kUnknown;
  return found == 1 ? Match::kFound : Match::kAmbiguous;
}

PidNsMap::Match PidNsMap::HostTid(uint64_t ns, int32_t ns_tid, int32_t host_tgid, uint64_t from,
                                  uint64_t to, int32_t* host_tid) const {
  return Find(ns, ns_tid, host_tgid, false, from, to, host_tid);
}

PidNsMap::Match PidNsMap::HostPid(uint64_t ns, int32_t ns_pid, uint64_t from, uint64_t to,
                                  int32_t* host_pid) const {
  return Find(ns, ns_pid, 0, true, from, to, host_pid);
}

}  // namespace gpunoise::model
