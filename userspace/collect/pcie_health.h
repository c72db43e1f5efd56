// PCIe link health of the NICs behind this namespace's network devices and
// of the node's GPUs, from sysfs: current and maximum link speed and width
// (`current_link_speed`, `max_link_speed`, `current_link_width`,
// `max_link_width`) and the AER error totals (`aer_dev_correctable`,
// `aer_dev_nonfatal`, `aer_dev_fatal`, present when the kernel has AER and
// the device reports it). Read through a root directory (`sysfs_root`,
// "/sys" in production; tests pass a synthetic tree; GPUNOISE_SYSFS_ROOT
// overrides the default the way the monitor's CPU placement does).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/nic_health.h"

namespace gpunoise::collect {

// "16.0 GT/s PCIe" -> 16.0, "8 GT/s" -> 8, "2.5 GT/s" -> 2.5; nullopt for
// "Unknown" and other text.
std::optional<double> ParseLinkSpeedGts(std::string_view text);
// The TOTAL_ERR_* line of an aer_dev_* file (or the sum of its lines when
// an older kernel prints none).
std::optional<uint64_t> ParseAerTotal(std::string_view text);

// "/sys", or GPUNOISE_SYSFS_ROOT when set.
std::string DefaultSysfsRoot();

class PcieHealthReader {
 public:
  explicit PcieHealthReader(std::string sysfs_root = DefaultSysfsRoot());

  // The PCI functions to follow: NICs by bus address and the device they
  // carry, plus every display/3D controller of NVIDIA (vendor 0x10de) found
  // under bus/pci/devices.
  void FindDevices(const std::map<std::string, std::string>& nic_address_to_device);
  const std::vector<model::PcieLinkState>& devices() const { return devices_; }

  // The current state of each followed device.
  std::vector<model::PcieLinkState> Read() const;

 private:
  model::PcieLinkState ReadOne(const model::PcieLinkState& which) const;
  std::string root_;
  std::vector<model::PcieLinkState> devices_;
};

}  // namespace gpunoise::collect
