#include "doctor/ethtool_info.h"

#include <algorithm>
#include <cctype>

#include "common/strings.h"

namespace gpunoise::doctor {

uint64_t LinkModes::MaxSupportedSpeed() const {
  uint64_t best = 0;
  for (const auto& m : supported) best = std::max(best, m.speed_mbps);
  return best;
}

std::optional<LinkMode> ParseLinkModeName(std::string_view name) {
  // Link mode names start with the speed in Mb/s followed by "base"
  // ("10baseT/Half", "800000baseCR8/Full"); others ("Autoneg", "Pause",
  // "FIBRE") carry no speed.
  size_t digits = 0;
  while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
  if (digits == 0 || name.substr(digits, 4) != "base") return std::nullopt;
  auto speed = ParseUint64(name.substr(0, digits));
  if (!speed) return std::nullopt;
  LinkMode m;
  m.name = std::string(name);
  m.speed_mbps = *speed;
  m.full_duplex = EndsWith(name, "/Full");
  return m;
}

}  // namespace gpunoise::doctor
