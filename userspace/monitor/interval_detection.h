// The detectors of userspace/analyze run on one interval's deltas of the
// kernel aggregates (not on a trace), and their findings become the
// monitor's observations (finding_tracker.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "model/irq_info.h"
#include "model/kernel_aggregates.h"
#include "model/net_counters.h"
#include "monitor/finding_tracker.h"

namespace gpunoise::monitor {

struct IntervalInput {
  const model::AggregateSnapshot* delta = nullptr;  // this interval's counts
  uint64_t start = 0, end = 0;                      // CLOCK_BOOTTIME
  const model::IrqTable* irqs = nullptr;
  const model::NetNames* names = nullptr;
};

class IntervalDetection {
 public:
  // `thresholds`: "NAME=VALUE" assignments (the `threshold` option), with
  // the names and units of docs/report.md.
  static Result<std::unique_ptr<IntervalDetection>> Create(const std::vector<std::string>& thresholds);
  IntervalDetection();
  ~IntervalDetection();

  std::vector<Observation> Run(const IntervalInput& in) const;
  // What the interval does to thresholds with a shorter window (empty when
  // nothing): analyze::IntervalWindowNote.
  std::string WindowNote(uint64_t interval_ns) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpunoise::monitor
