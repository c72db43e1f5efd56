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
  std::vector<int> affinity;            // /proc/irq/N/smp_affinity_list
  std::vector<int> effective_affinity;  // /proc/irq/N/effective_affinity_list
};

using IrqTable = std::map<int32_t, IrqInfo>;

}  // namespace gpunoise::model
