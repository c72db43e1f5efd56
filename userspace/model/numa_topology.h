// Where the node's CPUs, NICs and GPUs sit in its NUMA topology, as the
// recorder read it from sysfs (collect/numa_topology.h) and wrote it into
// the trace (export/perfetto/node_tracks.h), for the numa_locality finding.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpunoise::model {

struct NumaNodeCpus {
  int32_t node = 0;
  std::vector<int> cpus;  // /sys/devices/system/node/nodeN/cpulist
};

struct NumaDevice {
  std::string kind;    // "nic" or "gpu"
  std::string name;    // a NIC's interface ("eth0"); a GPU's PCI address
  std::string bus_id;  // the PCI function, lower case "0000:3b:00.0"; empty when not on PCI
  int32_t numa_node = -1;  // sysfs numa_node: -1 when the platform does not say (one node, most VMs)
};

struct NumaTopology {
  std::vector<NumaNodeCpus> nodes;  // by node id
  std::vector<NumaDevice> devices;
};

// A NIC IRQ's CPUs: its effective affinity where the kernel exposes one
// (/proc/irq/N/effective_affinity_list), else the allowed mask
// (smp_affinity_list; `effective` false).
struct NicIrqAffinity {
  int32_t irq = 0;
  std::string device;
  std::vector<int> cpus;
  bool effective = true;
};

// "00000000:3B:00.0" (NVML) or "0000:3b:00.0" (sysfs) -> "0000:3b:00.0":
// lower case, the domain cut to the 4 digits sysfs uses. Empty when `id`
// is no PCI address.
std::string NormalizePciBusId(std::string_view id);

}  // namespace gpunoise::model
