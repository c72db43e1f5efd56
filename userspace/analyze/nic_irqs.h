// Which hardware IRQs serve a network device, and which queue: from the
// names drivers give their MSI-X vectors ("eth0-TxRx-3", "mlx5_comp3@pci:...",
// "virtio0-input.0", "i40e-eth0-TxRx-7") and from the device names the
// network events in the trace mention.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "analyze/net_metadata.h"
#include "analyze/timeline.h"

namespace gpunoise::analyze {

struct NicQueueIrq {
  std::string device;
  int32_t queue = -1;
  std::vector<uint32_t> effective_affinity;  // empty when unknown
};

// IRQ number -> device/queue for every IRQ of the trace that serves a NIC:
// the network collectors' IRQ map when the trace has one, else the names
// (model::ParseNicIrqName, and device names the network events mention).
std::map<int32_t, NicQueueIrq> NicIrqs(const Timeline& t, const NetMetadata& net);

// Devices the network events and NIC IRQs of the trace mention.
std::set<std::string> NetDevices(const Timeline& t);

}  // namespace gpunoise::analyze
