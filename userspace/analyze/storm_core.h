// The softirq_storm rule, one for the report and the monitor. Both hand it
// the same typed input, one CPU's softirq time by vector and ksoftirqd's
// running time inside one window of a stated length, and both build their
// finding on StormFinding, so detector, kind and culprit mean the same in
// `gpunoise report` and `gpunoise monitor`.
//
// Where the windows come from differs, and docs/report.md ("Window
// semantics") says how: the report slides a softirq.window-long window over
// the trace's softirq slices; the monitor has one window per interval (its
// kernel aggregates are read once per interval), so a storm shorter than
// the interval is judged diluted over it (100 ms at 100% is 10% of 1 s).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/finding.h"
#include "analyze/thresholds.h"
#include "model/events.h"

namespace gpunoise::analyze {

struct SoftirqWindow {
  uint32_t cpu = 0;
  uint64_t start = 0;
  uint64_t length_ns = 0;
  uint64_t vec_ns[model::kNumSoftirqVecs] = {};  // time in each vector inside the window
  uint64_t ksoftirqd_ns = 0;                     // ksoftirqd/<cpu> running inside the window
};

struct StormRule {
  uint64_t window_ns = 0;  // softirq.window: the report's window length
  double share = 0;        // softirq.share
  double ksoftirqd_share = 0;  // softirq.ksoftirqd_share

  static StormRule From(const Thresholds& t);
  // `busy_ns` of a `length_ns` window reaches `limit` (a share); a hair of
  // tolerance so a window exactly at the threshold counts.
  static bool Reaches(uint64_t busy_ns, uint64_t length_ns, double limit);
  static bool Reaches(double share, double limit) { return share + 1e-9 >= limit; }
};

struct StormHit {
  uint32_t vec = 0;
  bool by_ksoftirqd = false;
  double share = 0;  // of the window: the vector's, or ksoftirqd's
};

// The vector ksoftirqd was mostly running (time by vector), NET_RX when
// nothing says.
uint32_t KsoftirqdVector(const uint64_t (&vec_ns)[model::kNumSoftirqVecs]);

// One window: each vector at softirq.share or more, and ksoftirqd at
// softirq.ksoftirqd_share or more (attributed to `ksoftirqd_vec`), the
// latter left out when that vector's own storm is in the same window (one
// storm, one finding, as the report merges overlapping episodes).
std::vector<StormHit> EvaluateStormWindow(const SoftirqWindow& w, const StormRule& rule, uint32_t ksoftirqd_vec);

// What both build their finding on: detector "softirq_storm", kind
// "softirq_share" or "ksoftirqd", the CPU, and the culprit "softirq NET_RX
// from eth0 queue 3" (device and queue when known).
Finding StormFinding(uint32_t cpu, uint32_t vec, bool by_ksoftirqd, const std::string& device, int32_t queue);

}  // namespace gpunoise::analyze
