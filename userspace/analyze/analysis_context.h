// What every detector reads: the timeline, the thresholds, the analysis
// window, the focus threads and their activity, the GPU model and the NIC
// IRQ map. Built once per report (analysis.h).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>

#include "analyze/gpu_model.h"
#include "analyze/net_metadata.h"
#include "analyze/nic_irqs.h"
#include "analyze/node_metadata.h"
#include "analyze/thread_activity.h"
#include "analyze/thresholds.h"
#include "analyze/timeline.h"

namespace gpunoise::analyze {

struct AnalysisContext {
  const Timeline* timeline = nullptr;
  const Thresholds* thresholds = nullptr;
  uint64_t from = 0, to = 0;  // analysis window
  std::set<int32_t> focus;
  std::unordered_map<int32_t, ThreadActivity> activities;  // of focus threads
  uint64_t focus_observed_ns = 0;  // sum of the focus threads' observed time
  GpuModel gpu;
  std::map<int32_t, NicQueueIrq> nic_irqs;
  NetMetadata net;  // the network collectors' counters and metadata
  NodeMetadata node;  // CPU quotas, throttling and steal counters

  const Timeline& t() const { return *timeline; }
  const Thresholds& th() const { return *thresholds; }
  // Events were lost on `cpu` during [from, to).
  bool LossDuring(uint32_t cpu, uint64_t a, uint64_t b) const;
};

}  // namespace gpunoise::analyze
