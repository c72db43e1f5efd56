// What `gpunoise record` wrote about the node beside the scheduler data
// (export/perfetto/node_tracks.h): the cgroups with a CPU quota, the
// processes each applies to, their throttling counters, and per-CPU steal
// (counter tracks found by their identity: node_counter).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyze/timeline.h"

namespace gpunoise::analyze {

struct QuotaCgroupData {
  std::string path;
  int version = 0;
  uint64_t quota_us = 0, period_us = 0;
  std::set<int32_t> pids;  // processes in it or below it
  // Increases since the recording started, at each sample.
  const std::vector<CounterSample>* nr_throttled = nullptr;
  const std::vector<CounterSample>* throttled_ns = nullptr;
  const std::vector<CounterSample>* nr_periods = nullptr;
};

struct NodeMetadata {
  std::map<std::string, QuotaCgroupData> quotas;
  std::map<uint32_t, const std::vector<CounterSample>*> steal;  // per CPU: share from each sample to the next
  // Each thread's CPU affinity as scanned (time, CPUs), in time order.
  std::map<int32_t, std::vector<std::pair<uint64_t, std::vector<int>>>> affinity;
  bool recorded = false;  // the trace has the node group's tracks at all
  // The quota cgroup a thread's process is in (nullptr: none). With nested
  // quotas the deepest (longest path) is taken.
  const QuotaCgroupData* QuotaOf(const Timeline& t, int32_t tid) const;
  // The CPUs `tid` may run on at `ts`: the latest scan before it, else the
  // first after it (masks rarely change); nullptr: never scanned.
  const std::vector<int>* AffinityAt(int32_t tid, uint64_t ts) const;
};

NodeMetadata ReadNodeMetadata(const Timeline& t);

// Steal ns of `cpu` within [from, to).
uint64_t StealNs(const NodeMetadata& m, uint32_t cpu, uint64_t from, uint64_t to);

}  // namespace gpunoise::analyze
