#include "analyze/node_metadata.h"

#include <algorithm>

#include "analyze/net_metadata.h"
#include "common/cpu_list.h"

namespace gpunoise::analyze {

const QuotaCgroupData* NodeMetadata::QuotaOf(const Timeline& t, int32_t tid) const {
  int32_t tgid = t.TgidOf(tid);
  const QuotaCgroupData* best = nullptr;
  for (const auto& [path, q] : quotas)
    if ((q.pids.count(tgid) || q.pids.count(tid)) && (!best || path.size() > best->path.size())) best = &q;
  return best;
}

const std::vector<int>* NodeMetadata::AffinityAt(int32_t tid, uint64_t ts) const {
  auto it = affinity.find(tid);
  if (it == affinity.end() || it->second.empty()) return nullptr;
  const std::vector<int>* best = &it->second.front().second;
  for (const auto& [when, cpus] : it->second)
    if (when <= ts) best = &cpus;
  return best;
}

NodeMetadata ReadNodeMetadata(const Timeline& t) {
  NodeMetadata m;
  for (const MetaInstant& e : t.node_metadata) {
    m.recorded = true;
    if (e.name == "cpu quota") {
      const model::TrackArg* path = e.Find("path");
      if (!path || path->type != model::TrackArg::Type::kString) continue;
      QuotaCgroupData& q = m.quotas[path->string_value];
      q.path = path->string_value;
      int64_t v = 0;
      if (const auto* a = e.Find("version"); a && a->AsInt64(&v)) q.version = static_cast<int>(v);
      if (const auto* a = e.Find("quota_us"); a && a->AsInt64(&v)) q.quota_us = static_cast<uint64_t>(v);
      if (const auto* a = e.Find("period_us"); a && a->AsInt64(&v)) q.period_us = static_cast<uint64_t>(v);
    } else if (e.name == "quota process") {
      const model::TrackArg* cg = e.Find("cgroup");
      const model::TrackArg* pid = e.Find("pid");
      int64_t v = 0;
      if (!cg || cg->type != model::TrackArg::Type::kString || !pid || !pid->AsInt64(&v)) continue;
      m.quotas[cg->string_value].pids.insert(static_cast<int32_t>(v));
    } else if (e.name == "affinity") {
      const model::TrackArg* tid = e.Find("tid");
      const model::TrackArg* cpus = e.Find("cpus");
      int64_t v = 0;
      if (!tid || !tid->AsInt64(&v) || !cpus || cpus->type != model::TrackArg::Type::kString) continue;
      auto list = ParseCpuList(cpus->string_value);
      if (list.ok()) m.affinity[static_cast<int32_t>(v)].push_back({e.ts, *list});
    }
  }
  for (const auto& [uuid, samples] : t.tracks.counters) {
    const model::TrackIdentity* id = t.tracks.Identity(uuid);
    if (!id || id->kind != model::TrackKind::kNodeCounter) continue;
    m.recorded = true;
    using N = model::NodeMetric;
    if (id->node_metric == N::kCpuSteal) {
      if (id->cpu >= 0) m.steal[static_cast<uint32_t>(id->cpu)] = &samples;
      continue;
    }
    if (id->node_metric != N::kCgroupNrThrottled && id->node_metric != N::kCgroupThrottledNs &&
        id->node_metric != N::kCgroupNrPeriods)
      continue;
    QuotaCgroupData& q = m.quotas[id->detail];
    q.path = id->detail;
    if (id->node_metric == N::kCgroupNrThrottled) q.nr_throttled = &samples;
    else if (id->node_metric == N::kCgroupThrottledNs) q.throttled_ns = &samples;
    else q.nr_periods = &samples;
  }
  return m;
}

uint64_t StealNs(const NodeMetadata& m, uint32_t cpu, uint64_t from, uint64_t to) {
  auto it = m.steal.find(cpu);
  if (it == m.steal.end()) return 0;
  // A share held from one sample to the next: the rate integral, in seconds.
  return static_cast<uint64_t>(IntegrateRate(*it->second, from, to) * 1e9);
}

}  // namespace gpunoise::analyze
