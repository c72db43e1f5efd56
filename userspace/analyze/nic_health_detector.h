// The NIC's own view as findings (detector "nic_trouble"):
//  - link_flap: a device's carrier went down (and usually back up) during
//    the recording; each down/up from the link events, with the kernel's
//    carrier_changes count;
//  - pcie_degraded: a NIC's or GPU's PCIe link runs narrower (or a NIC's
//    slower) than its maximum, retrained during the recording, or reported
//    AER errors during it;
//  - nic_saturation: the NIC's own drop counters for a queue rose (rx
//    missed / out of buffer / queue drops) while NET_RX on the CPU that
//    serves that queue was at its budget, or while that CPU ran something
//    else; the finding names the CPU and what it was doing.
// Thresholds: nic.saturation_drop_rate, nic.window, softirq.share.
#pragma once

#include <vector>

#include "analyze/analysis_context.h"
#include "analyze/finding.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectNicHealth(const AnalysisContext& ctx);

}  // namespace gpunoise::analyze
