// The monitor's view of the NICs themselves: each interval, every device's
// own counters and link state (collect/nic_sampler.h) through a tracker
// (cumulative, resets counted from zero) and the PCIe links of the NICs and
// GPUs, as the input of the NIC metric families (nic_metrics.h). Link
// changes and counter resets are logged as they are seen.
#pragma once

#include <cstdint>

#include "collect/nic_sampler.h"
#include "collect/pcie_health.h"
#include "model/nic_counter_tracker.h"
#include "monitor/nic_metrics.h"

namespace gpunoise::monitor {

class NicMonitor {
 public:
  void Read(uint64_t now);
  const NicMetricsInput& metrics() const { return metrics_; }

 private:
  collect::NicSampler sampler_;
  model::NicCounterTracker tracker_;
  collect::PcieHealthReader pcie_;
  bool pcie_found_ = false;
  NicMetricsInput metrics_;
};

}  // namespace gpunoise::monitor
