// What is known about each hardware IRQ: its name and, for NIC queues, the
// device and queue it serves, and where the kernel may and does deliver it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gpunoise::model {

struct IrqInfo {
  int32_t irq = 0;
  std::string name;             // action name as irq_handler_entry reports it
  std::string device;           // e.g. "eth0" when known
  int32_t queue = -1;           // NIC queue index when known
  // For NIC IRQs: "rx", "tx", "txrx" (one vector for a queue pair or a
  // completion queue), or "control" (config, async, management); empty when
  // the IRQ does not belong to a network device.
  std::string queue_kind;
  std::vector<int> affinity;            // /proc/irq/N/smp_affinity_list
  std::vector<int> effective_affinity;  // /proc/irq/N/effective_affinity_list
};

using IrqTable = std::map<int32_t, IrqInfo>;

// One line a person reads: "CPU 5 handles eth0 rx queue 5",
// "CPUs 0-3 may handle eth0 txrx queue 2 (effective affinity unknown)",
// "CPU 0 handles eth0 (virtio2-config, control)". Empty for IRQs without a
// device.
std::string DescribeNicIrq(const IrqInfo& irq);

}  // namespace gpunoise::model
