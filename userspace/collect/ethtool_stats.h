// A NIC's own statistics, read the two ways the kernel offers them:
//  - the driver's private counters (`ethtool -S`): ETHTOOL_GSSET_INFO,
//    ETHTOOL_GSTRINGS and ETHTOOL_GSTATS over the SIOCETHTOOL ioctl (every
//    kernel; names are read once per device and kept, values every sample);
//  - the standard groups over netlink (ETHTOOL_MSG_STATS_GET: eth-phy,
//    eth-mac, eth-ctrl, rmon; ETHTOOL_MSG_PAUSE_GET with
//    ETHTOOL_FLAG_STATS), named by IEEE 802.3 ("eth-mac.FramesReceivedOK",
//    "pause.rx_frames"), for drivers that implement them.
// Both act on interfaces of this process's network namespace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collect/ethtool_genl.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "model/nic_health.h"

struct nlmsghdr;

namespace gpunoise::collect {

struct DriverInfo {
  std::string driver;    // "mlx5_core", "veth", "virtio_net"
  std::string bus_info;  // "0000:3b:00.0" for PCI devices, empty for virtual ones
  std::string firmware;
};

class EthtoolIoctl {
 public:
  static Result<EthtoolIoctl> Open();

  Result<DriverInfo> Info(const std::string& ifname) const;
  // The names of the driver's counters (ETH_SS_STATS), in GSTATS order.
  Result<std::vector<std::string>> StatNames(const std::string& ifname) const;
  // The values, in the order of StatNames; `expected` is how many names
  // there were (a driver whose count changed since must be re-read: error).
  Result<std::vector<uint64_t>> StatValues(const std::string& ifname, size_t expected) const;
  // Link speed in Mb/s, duplex and autonegotiation (ETHTOOL_GSET, what
  // `ethtool DEV` shows); unknown parts (no link, virtual devices without a
  // speed) are 0 / empty.
  struct LinkSettings {
    uint32_t speed_mbps = 0;
    std::string duplex;   // "full", "half", "" unknown
    std::string autoneg;  // "on", "off", "" unknown
  };
  LinkSettings Settings(const std::string& ifname) const;

 private:
  explicit EthtoolIoctl(UniqueFd fd) : fd_(std::move(fd)) {}
  Result<uint32_t> StatCount(const std::string& ifname) const;
  UniqueFd fd_;
};

// The standard statistics groups and pause statistics of one device.
// Missing groups are left out; an error only when neither request worked.
Result<std::vector<model::NicCounterValue>> ReadStandardStats(EthtoolGenl& genl, const std::string& ifname);

// Reply parsers (public for tests that build replies by hand). Appends to out.
void ParseStatsReply(const nlmsghdr* msg, std::vector<model::NicCounterValue>& out);
void ParsePauseStatsReply(const nlmsghdr* msg, std::vector<model::NicCounterValue>& out);

// "eth-mac.FramesReceivedOK" for (ETHTOOL_STATS_ETH_MAC,
// ETHTOOL_A_STATS_ETH_MAC_5_RX_PKT); empty for ids this build does not know.
std::string StandardStatName(uint32_t group, uint32_t id);

}  // namespace gpunoise::collect
