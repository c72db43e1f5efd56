#include "model/numa_topology.h"

#include <cctype>

namespace gpunoise::model {

std::string NormalizePciBusId(std::string_view id) {
  // DOMAIN:BUS:DEV.FN, the domain 4 to 8 hex digits.
  size_t colon = id.find(':');
  if (colon == std::string_view::npos || colon < 4 || colon > 8 || id.size() != colon + 8) return "";
  std::string_view rest = id.substr(colon);
  if (rest[0] != ':' || rest[3] != ':' || rest[6] != '.') return "";
  std::string out;
  for (size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    bool sep = i == colon || i == colon + 3 || i == colon + 6;
    if (!sep && !std::isxdigit(static_cast<unsigned char>(c))) return "";
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  // NVML pads the domain to 8 digits; sysfs writes 4 unless it needs more.
  while (colon > 4 && out[0] == '0') {
    out.erase(0, 1);
    --colon;
  }
  return out;
}

}  // namespace gpunoise::model
