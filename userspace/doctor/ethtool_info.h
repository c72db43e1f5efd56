// What ethtool knows about a NIC beyond sysfs: ring sizes, interrupt
// coalescing and the link modes the device supports. Each part is optional
// because drivers implement the ethtool operations selectively.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace gpunoise::doctor {

struct RingSizes {
  uint32_t rx = 0, rx_max = 0, tx = 0, tx_max = 0;
};

struct Coalesce {
  // Each field is present only when the driver supports the parameter (the
  // kernel omits unsupported ones from its netlink reply).
  std::optional<uint32_t> rx_usecs, rx_max_frames, tx_usecs, tx_max_frames;
  std::optional<bool> adaptive_rx, adaptive_tx;
};

struct LinkMode {
  std::string name;  // "100000baseCR4/Full", as the kernel names it
  uint64_t speed_mbps = 0;
  bool full_duplex = false;
};

struct LinkModes {
  std::vector<LinkMode> supported;
  std::optional<uint32_t> speed_mbps;  // current, absent when unknown
  std::optional<bool> full_duplex;     // current
  std::optional<bool> autoneg;
  uint64_t MaxSupportedSpeed() const;
};

// A part's value, or why it is missing ("not supported by virtio_net").
template <typename T>
using Part = Result<T>;

struct EthtoolInfo {
  Part<RingSizes> rings = Error{"not queried"};
  Part<Coalesce> coalesce = Error{"not queried"};
  Part<LinkModes> link_modes = Error{"not queried"};
};

// Queries one interface by name; the production source is netlink
// (ethtool_netlink.h), tests pass their own.
using EthtoolSource = std::function<EthtoolInfo(const std::string& ifname)>;

// "25000baseCR/Full" -> {25000 Mb/s, full}; nullopt for names without a speed.
std::optional<LinkMode> ParseLinkModeName(std::string_view name);

}  // namespace gpunoise::doctor
