#include "collect/pcie_health.h"

#include <cstdlib>
#include <set>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {

std::optional<double> ParseLinkSpeedGts(std::string_view text) {
  text = Trim(text);
  size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == 0 || text.substr(end).find("GT/s") == std::string_view::npos) return std::nullopt;
  try {
    return std::stod(std::string(text.substr(0, end)));
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<uint64_t> ParseAerTotal(std::string_view text) {
  uint64_t sum = 0;
  bool any = false;
  for (std::string_view line : Split(text, '\n')) {
    line = Trim(line);
    size_t space = line.rfind(' ');
    if (space == std::string_view::npos) continue;
    auto v = ParseUint64(Trim(line.substr(space + 1)));
    if (!v) continue;
    if (StartsWith(line, "TOTAL_ERR_")) return *v;
    sum += *v;
    any = true;
  }
  if (!any) return std::nullopt;
  return sum;
}

std::string DefaultSysfsRoot() {
  const char* root = std::getenv("GPUNOISE_SYSFS_ROOT");
  return root && *root ? std::string(root) : std::string("/sys");
}

PcieHealthReader::PcieHealthReader(std::string sysfs_root) : root_(std::move(sysfs_root)) {}

void PcieHealthReader::FindDevices(const std::map<std::string, std::string>& nic_address_to_device) {
  devices_.clear();
  const std::string pci = root_ + "/bus/pci/devices/";
  std::set<std::string> taken;
  for (const auto& [address, device] : nic_address_to_device) {
    if (address.empty() || !PathExists(pci + address)) continue;  // virtual devices, virtio's "virtio2"
    if (!taken.insert(address).second) continue;
    model::PcieLinkState s;
    s.address = address;
    s.role = "nic";
    s.device = device;
    devices_.push_back(std::move(s));
  }
  auto entries = ListDirectory(pci);
  if (!entries.ok()) return;
  for (const std::string& address : *entries) {
    if (taken.count(address)) continue;
    auto vendor = ReadFileToString(pci + address + "/vendor");
    auto cls = ReadFileToString(pci + address + "/class");
    if (!vendor.ok() || !cls.ok()) continue;
    // 0x0300xx VGA, 0x0302xx 3D controller (data-center GPUs).
    std::string_view c = Trim(*cls);
    if (Trim(*vendor) != "0x10de" || !(StartsWith(c, "0x0300") || StartsWith(c, "0x0302"))) continue;
    model::PcieLinkState s;
    s.address = address;
    s.role = "gpu";
    devices_.push_back(std::move(s));
  }
  // A function with neither link attributes nor AER (a virtio device in a
  // VM, a root-complex integrated endpoint) has nothing to follow.
  std::erase_if(devices_, [&](const model::PcieLinkState& d) {
    const std::string dir = pci + d.address + "/";
    return !PathExists(dir + "current_link_width") && !PathExists(dir + "aer_dev_correctable");
  });
}

model::PcieLinkState PcieHealthReader::ReadOne(const model::PcieLinkState& which) const {
  model::PcieLinkState s = which;
  const std::string dir = root_ + "/bus/pci/devices/" + which.address + "/";
  auto text = [&](const char* file) -> std::optional<std::string> {
    auto t = ReadFileToString(dir + file);
    if (!t.ok()) return std::nullopt;
    return *t;
  };
  if (auto t = text("current_link_speed")) s.speed_gts = ParseLinkSpeedGts(*t).value_or(0);
  if (auto t = text("max_link_speed")) s.max_speed_gts = ParseLinkSpeedGts(*t).value_or(0);
  if (auto t = text("current_link_width")) s.width = static_cast<uint32_t>(ParseUint64(Trim(*t)).value_or(0));
  if (auto t = text("max_link_width")) s.max_width = static_cast<uint32_t>(ParseUint64(Trim(*t)).value_or(0));
  if (auto t = text("aer_dev_correctable")) s.aer_correctable = ParseAerTotal(*t);
  if (auto t = text("aer_dev_nonfatal")) s.aer_nonfatal = ParseAerTotal(*t);
  if (auto t = text("aer_dev_fatal")) s.aer_fatal = ParseAerTotal(*t);
  return s;
}

std::vector<model::PcieLinkState> PcieHealthReader::Read() const {
  std::vector<model::PcieLinkState> out;
  out.reserve(devices_.size());
  for (const auto& d : devices_) out.push_back(ReadOne(d));
  return out;
}

}  // namespace gpunoise::collect
