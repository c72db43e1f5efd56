// Turns each interval's findings into episodes: a finding that shows up in
// consecutive intervals (or after a gap shorter than `end_after` quiet
// intervals) is one episode. An episode's start is what raises
// gpunoise_findings_total, writes a log line and asks the flight recorder
// for a dump; while it lasts gpunoise_finding_active is 1; its end writes
// another log line.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "monitor/metrics_builder.h"

namespace gpunoise::monitor {

// One interval's verdict of one detector about one place.
struct Observation {
  ActiveFinding what;                  // detector, kind, where, culprit, title
  std::vector<std::string> evidence;   // lines for a person
};

struct Episode {
  ActiveFinding what;
  std::vector<std::string> evidence;
  uint64_t start = 0;      // start of the first interval it was seen in
  uint64_t last_seen = 0;  // end of the last interval it was seen in
  uint64_t intervals = 0;  // intervals it was seen in
  uint32_t quiet = 0;      // intervals since it was last seen
};

class FindingTracker {
 public:
  // An episode ends after this many intervals without its finding.
  explicit FindingTracker(uint32_t end_after = 2) : end_after_(end_after) {}

  struct Changes {
    std::vector<Episode> started;
    std::vector<Episode> ended;
  };
  // `observations` of the interval [interval_start, interval_end).
  Changes Observe(const std::vector<Observation>& observations, uint64_t interval_start, uint64_t interval_end);

  std::vector<ActiveFinding> Active() const;
  const std::map<std::string, uint64_t>& totals() const { return totals_; }
  size_t episodes() const { return episodes_.size(); }

 private:
  // Two tasks that each kept focus threads waiting are two episodes.
  using Key = std::tuple<std::string, std::string, int32_t, std::string, int32_t, int32_t>;
  static Key KeyOf(const ActiveFinding& f) { return {f.detector, f.kind, f.cpu, f.device, f.queue, f.culprit_tid}; }

  uint32_t end_after_;
  std::map<Key, Episode> episodes_;
  std::map<std::string, uint64_t> totals_;
};

}  // namespace gpunoise::monitor
