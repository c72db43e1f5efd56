#include "monitor/nic_monitor.h"

#include <map>
#include <string>

#include "common/log.h"

namespace gpunoise::monitor {

void NicMonitor::Read(uint64_t now) {
  auto readings = sampler_.Read();
  if (!readings.ok()) return;  // the monitor's link statistics name the same failure once
  for (const model::LinkEvent& e : tracker_.Observe(now, *readings).events) {
    if (e.kind == model::LinkEventKind::kCounterReset)
      log::Info("monitor: {}: counter {} went from {} to {} (reset)", e.device, e.counter, e.previous, e.current);
    else if (e.kind == model::LinkEventKind::kSpeedChange)
      log::Warning("monitor: {}: link speed {} -> {} Mb/s", e.device, e.previous, e.current);
    else if (e.kind == model::LinkEventKind::kDuplexChange)
      log::Warning("monitor: {}: duplex {} -> {}", e.device, e.previous_duplex, e.duplex);
    else if (e.kind == model::LinkEventKind::kAutonegChange)
      log::Warning("monitor: {}: autonegotiation {} -> {}", e.device, e.previous_autoneg, e.autoneg);
    else
      log::Warning("monitor: {}: {} (carrier_changes {})", e.device, model::LinkEventKindName(e.kind), e.carrier_changes);
  }
  if (!pcie_found_) {
    std::map<std::string, std::string> nics;
    for (const auto& [device, info] : sampler_.drivers()) nics[info.bus_info] = device;
    pcie_.FindDevices(nics);
    pcie_found_ = true;
  }
  metrics_.totals = tracker_.Totals();
  metrics_.devices = tracker_.Devices();
  metrics_.carrier.clear();
  metrics_.speed_mbps.clear();
  metrics_.full_duplex.clear();
  // Up: carrier and operationally up ("unknown" for drivers that do not
  // report operstate). An admin-down device may keep its carrier (ifb).
  for (const auto& r : *readings) {
    metrics_.carrier[r.device] = r.carrier && (r.operstate == "up" || r.operstate == "unknown");
    if (r.speed_mbps) metrics_.speed_mbps[r.device] = r.speed_mbps;
    if (!r.duplex.empty()) metrics_.full_duplex[r.device] = r.duplex == "full";
  }
  metrics_.pcie = pcie_.Read();
}

}  // namespace gpunoise::monitor
