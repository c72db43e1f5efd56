// The NUMA topology `gpunoise record` wrote on the node metadata track
// (export/perfetto/node_tracks.h: "numa node", "numa device", "nic irq
// cpus", "gpu bus id"), read back as typed data for numa_locality.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/timeline.h"
#include "model/numa_topology.h"

namespace gpunoise::analyze {

struct NicIrqCpus {
  int32_t irq = 0;
  std::string device;
  std::vector<int> start_cpus, end_cpus;  // empty: not sampled at that end
  bool effective = true;  // false: the allowed mask (no effective affinity on this kernel)
};

struct NumaMetadata {
  bool recorded = false;  // the trace has a "numa node" instant at all
  std::map<int32_t, std::vector<int>> node_cpus;
  std::map<int, int32_t> cpu_node;
  std::vector<model::NumaDevice> devices;
  std::map<int32_t, NicIrqCpus> nic_irqs;  // by IRQ
  std::map<std::string, std::string> gpu_bus_by_uuid;  // NVML: uuid -> normalized PCI address
  std::map<int64_t, std::string> gpu_bus_by_index;     // NVML index -> normalized PCI address

  int32_t NodeOfCpu(int cpu) const;  // -1: unknown
  const model::NumaDevice* Device(std::string_view kind, std::string_view name) const;
  const model::NumaDevice* DeviceByBus(std::string_view bus_id) const;
  std::string CpusText(int32_t node) const;  // "0-3", "none"
  // Nodes with CPUs.
  size_t CpuNodes() const;
  // Why locality cannot be measured from this trace; empty when it can: two
  // or more nodes with CPUs and at least one GPU or NIC with a known node.
  std::string NotMeasurableReason() const;
};

NumaMetadata ReadNumaMetadata(const Timeline& t);

}  // namespace gpunoise::analyze
