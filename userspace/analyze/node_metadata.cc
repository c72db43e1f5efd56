#include "analyze/node_metadata.h"

#include <algorithm>
#include <cstdlib>

#include "analyze/net_metadata.h"
#include "common/cpu_list.h"

namespace gpunoise::analyze {
namespace {

constexpr std::string_view kCgroupPrefix = "cgroup ";
constexpr std::string_view kRootName = "Node";

bool CutSuffix(std::string_view name, std::string_view suffix, std::string* rest) {
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) return false;
  *rest = std::string(name.substr(0, name.size() - suffix.size()));
  return true;
}

}  // namespace

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
    auto it = t.tracks.tracks.find(uuid);
    if (it == t.tracks.tracks.end()) continue;
    std::string path = t.tracks.TrackPath(uuid);
    if (path.rfind(std::string(kRootName) + " / ", 0) != 0) continue;
    m.recorded = true;
    const std::string& name = it->second.name;
    std::string rest;
    if (name.rfind(kCgroupPrefix, 0) == 0) {
      std::string_view tail = std::string_view(name).substr(kCgroupPrefix.size());
      if (CutSuffix(tail, " nr_throttled", &rest)) m.quotas[rest].nr_throttled = &samples;
      else if (CutSuffix(tail, " throttled ns", &rest)) m.quotas[rest].throttled_ns = &samples;
      else if (CutSuffix(tail, " nr_periods", &rest)) m.quotas[rest].nr_periods = &samples;
      if (!rest.empty()) m.quotas[rest].path = rest;
    } else if (name.rfind("cpu", 0) == 0 && CutSuffix(name, " steal", &rest)) {
      char* end = nullptr;
      unsigned long cpu = std::strtoul(rest.c_str() + 3, &end, 10);
      if (end && *end == 0 && rest.size() > 3) m.steal[static_cast<uint32_t>(cpu)] = &samples;
    }
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
