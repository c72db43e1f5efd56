#include "analyze/storm_core.h"

#include <fmt/format.h>

#include "analyze/interference_core.h"

namespace gpunoise::analyze {

StormRule StormRule::From(const Thresholds& t) {
  StormRule r;
  r.window_ns = std::max<uint64_t>(1000, t.GetNs("softirq.window"));
  r.share = t.Get("softirq.share");
  r.ksoftirqd_share = t.Get("softirq.ksoftirqd_share");
  return r;
}

bool StormRule::Reaches(uint64_t busy_ns, uint64_t length_ns, double limit) {
  if (!length_ns) return false;
  return Reaches(static_cast<double>(busy_ns) / static_cast<double>(length_ns), limit);
}

uint32_t KsoftirqdVector(const uint64_t (&vec_ns)[model::kNumSoftirqVecs]) {
  uint32_t vec = static_cast<uint32_t>(model::SoftirqVec::kNetRx);
  uint64_t best = 0;
  for (uint32_t v = 0; v < model::kNumSoftirqVecs; ++v)
    if (vec_ns[v] > best) {
      best = vec_ns[v];
      vec = v;
    }
  return vec;
}

std::vector<StormHit> EvaluateStormWindow(const SoftirqWindow& w, const StormRule& rule, uint32_t ksoftirqd_vec) {
  std::vector<StormHit> out;
  if (!w.length_ns) return out;
  const double len = static_cast<double>(w.length_ns);
  bool vec_storm = false;
  for (uint32_t vec = 0; vec < model::kNumSoftirqVecs; ++vec) {
    double share = static_cast<double>(w.vec_ns[vec]) / len;
    if (!w.vec_ns[vec] || !StormRule::Reaches(share, rule.share)) continue;
    out.push_back({vec, false, share});
    if (vec == ksoftirqd_vec) vec_storm = true;
  }
  double k = static_cast<double>(w.ksoftirqd_ns) / len;
  if (w.ksoftirqd_ns && StormRule::Reaches(k, rule.ksoftirqd_share) && !vec_storm)
    out.push_back({ksoftirqd_vec, true, k});
  return out;
}

Finding StormFinding(uint32_t cpu, uint32_t vec, bool by_ksoftirqd, const std::string& device, int32_t queue) {
  Finding f;
  f.detector = "softirq_storm";
  f.kind = by_ksoftirqd ? "ksoftirqd" : "softirq_share";
  f.cpus = {cpu};
  f.device = device;
  f.queue = queue;
  f.culprit = SoftirqCulpritName(vec);
  f.culprit_kind = "softirq";
  if (!device.empty())
    f.culprit += queue >= 0 ? fmt::format(" from {} queue {}", device, queue) : fmt::format(" from {}", device);
  return f;
}

}  // namespace gpunoise::analyze
