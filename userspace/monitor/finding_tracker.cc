#include "monitor/finding_tracker.h"

namespace gpunoise::monitor {

FindingTracker::Changes FindingTracker::Observe(const std::vector<Observation>& observations,
                                                uint64_t interval_start, uint64_t interval_end) {
  Changes changes;
  std::map<Key, const Observation*> seen;
  for (const Observation& o : observations) seen.emplace(KeyOf(o.what), &o);
  for (auto it = episodes_.begin(); it != episodes_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    if (++it->second.quiet >= end_after_) {
      changes.ended.push_back(it->second);
      it = episodes_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, o] : seen) {
    auto it = episodes_.find(key);
    if (it == episodes_.end()) {
      Episode e;
      e.what = o->what;
      e.evidence = o->evidence;
      e.start = interval_start;
      e.last_seen = interval_end;
      e.intervals = 1;
      ++totals_[o->what.detector];
      changes.started.push_back(e);
      episodes_.emplace(key, std::move(e));
    } else {
      Episode& e = it->second;
      e.what.title = o->what.title;  // the latest numbers
      e.what.culprit = o->what.culprit;
      e.evidence = o->evidence;
      e.last_seen = interval_end;
      ++e.intervals;
      e.quiet = 0;
    }
  }
  return changes;
}

std::vector<ActiveFinding> FindingTracker::Active() const {
  std::vector<ActiveFinding> out;
  for (const auto& [key, e] : episodes_) out.push_back(e.what);
  return out;
}

}  // namespace gpunoise::monitor
