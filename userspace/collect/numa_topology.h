// The node's NUMA topology from sysfs, for the numa_locality finding: each
// node's CPUs (/sys/devices/system/node/nodeN/cpulist), and the numa_node of
// every NIC backed by a device (/sys/class/net/IF/device, its PCI function)
// and of every NVIDIA GPU (PCI class 0x0300/0x0302, vendor 0x10de). Read once
// per recording: a few dozen small files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/irq_info.h"
#include "model/numa_topology.h"

namespace gpunoise::collect {

// `sys_root` is "/sys" except in tests.
model::NumaTopology ReadNumaTopology(const std::string& sys_root = "/sys");

// The IRQs of network devices in `irqs` (MapNicIrqs filled their device)
// with the CPUs each is delivered to: the effective affinity, else the
// allowed mask.
std::vector<model::NicIrqAffinity> NicIrqAffinities(const model::IrqTable& irqs);

}  // namespace gpunoise::collect
