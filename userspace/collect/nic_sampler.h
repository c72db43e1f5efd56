// Reads every network device of this namespace once: link state and
// carrier_changes (one rtnetlink dump), the driver (ETHTOOL_GDRVINFO), the
// driver's `ethtool -S` counters, the standard statistics groups and the
// kernel's per-queue statistics (netdev_qstats.h, one dump for all). A
// device without ethtool statistics is still read for its link state; each
// reason a part cannot be read is named once per device (log and
// problems()), never per sample.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collect/ethtool_genl.h"
#include "collect/ethtool_stats.h"
#include "collect/link_stats.h"
#include "collect/netdev_qstats.h"
#include "common/result.h"
#include "model/nic_counter_tracker.h"

namespace gpunoise::collect {

class NicSampler {
 public:
  NicSampler();

  // One reading of every device; `links` receives the dump it used (for a
  // LinkMonitor's seed). Fails only when the link dump itself fails.
  Result<std::vector<model::NicReading>> Read(std::vector<LinkStats>* links = nullptr);

  // The bus address (`ethtool -i` bus-info) and driver of each device seen.
  const std::map<std::string, DriverInfo>& drivers() const { return drivers_; }
  // "eth0: the driver has no ethtool statistics", once each.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  struct Names {
    std::vector<std::string> names;
    bool unavailable = false;
  };
  void Problem(const std::string& device, const std::string& what);

  std::optional<EthtoolIoctl> ioctl_;
  std::unique_ptr<EthtoolGenl> genl_;
  std::optional<NetdevQstats> qstats_;
  LinkStatsReader link_stats_;
  std::map<std::string, DriverInfo> drivers_;
  std::map<std::string, Names> names_;
  std::set<std::string> no_standard_;  // devices whose driver has no standard groups
  std::set<std::string> named_;        // "device\nwhat" already reported
  std::vector<std::string> problems_;
};

}  // namespace gpunoise::collect
