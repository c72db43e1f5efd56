// Locality: where GPUs and NICs sit (NUMA node, local CPUs, shared PCIe
// switch) and whether GPU processes run and allocate on their GPU's node.
#pragma once

#include <string>

#include "doctor/check_result.h"
#include "doctor/doctor_inputs.h"

namespace gpunoise::doctor {

// How close two PCI devices are, in nvidia-smi topo's terms (closest first).
enum class PciDistance {
  kSwitch,      // PIX/PXB: a common PCIe bridge or switch; GPUDirect RDMA stays below it
  kHostBridge,  // PHB: same root complex, traffic goes through the CPU's host bridge
  kNumaNode,    // NODE: different host bridges on one NUMA node
  kSystem,      // SYS: across the inter-socket link (or unknown NUMA node)
};
PciDistance DistanceBetween(const PciDevice& a, const PciDevice& b, bool single_node);
std::string_view PciDistanceName(PciDistance d);

// locality.devices
CheckResult CheckDeviceLocality(const DoctorInputs& in);
// locality.processes
CheckResult CheckProcessLocality(const DoctorInputs& in);

}  // namespace gpunoise::doctor
