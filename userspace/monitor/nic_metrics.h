// The NIC's own counters, link state and PCIe health as metric families
// (docs/monitor.md, "NIC counters"). Names and labels are stable; the
// counter kinds are model::NicCounterKindName values, so the same query
// works for any driver:
//   gpunoise_nic_drops_total{device,kind}            drops by kind (device-level where the driver has it)
//   gpunoise_nic_queue_drops_total{device,queue,kind}  per-queue drop counters
//   gpunoise_nic_pause_frames_total{device,direction,type}  type "link" (802.3x) or "pfc"
//   gpunoise_nic_errors_total{device,kind}           tx_timeout, rx_error, link_down, pcie_error, reset, ...
//   gpunoise_nic_carrier_changes_total{device}       carrier changes since the monitor started
//   gpunoise_nic_statistics_resets_total{device}        counters that went down (device resets)
//   gpunoise_nic_link_up{device}                     1 with carrier and operstate up
//   gpunoise_nic_link_speed_mbps{device}             negotiated speed while the link is up (ethtool)
//   gpunoise_nic_link_full_duplex{device}            1 full, 0 half duplex while the link is up
//   gpunoise_pcie_aer_errors_total{address,role,device,severity}
//   gpunoise_pcie_link_width{address,role,device}, gpunoise_pcie_link_max_width{...}
//   gpunoise_pcie_link_speed_gts{...}, gpunoise_pcie_link_max_speed_gts{...}
#pragma once

#include <map>
#include <string>
#include <vector>

#include "export/openmetrics/metric_family.h"
#include "model/nic_counter_tracker.h"
#include "model/nic_health.h"

namespace gpunoise::monitor {

struct NicMetricsInput {
  std::vector<model::NicCounterTotal> totals;  // cumulative since the monitor started
  std::vector<model::NicCounterTracker::DeviceSummary> devices;
  std::map<std::string, bool> carrier;  // device -> carrier and operationally up now
  // Link settings now, where the driver reports them (only with a link).
  std::map<std::string, uint32_t> speed_mbps;
  std::map<std::string, bool> full_duplex;
  std::vector<model::PcieLinkState> pcie;
};

void AddNicFamilies(const NicMetricsInput& in, std::vector<openmetrics::MetricFamily>& out);

}  // namespace gpunoise::monitor
