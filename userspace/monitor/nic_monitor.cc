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
  // Up: carrier and operationally up ("unknown" for drivers that do not
  // report operstate). An admin-down device may keep its carrier (ifb).
  for (const auto& r : *readings)
    metrics_.carrier[r.device] = r.carrier && (r.operstate == "up" || r.operstate == "unknown");
  metrics_.pcie = pcie_.Read();
}

}  // namespace gpunoise::monitor
