#include "model/link_kernel_log.h"

#include <algorithm>

namespace gpunoise::model {
namespace {

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '@' || c == '.';
}

}  // namespace

bool TextNamesInterface(std::string_view text, std::string_view name) {
  if (name.empty()) return false;
  for (size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    bool before = at == 0 || !NameChar(text[at - 1]);
    size_t end = at + name.size();
    // A '.' right after the name ends it when the sentence ends there
    // ("link down on eth0."), not when a VLAN or alias follows ("eth0.100").
    bool after = end == text.size() || !NameChar(text[end]) ||
                 (text[end] == '.' && (end + 1 == text.size() || !NameChar(text[end + 1])));
    if (before && after) return true;
  }
  return false;
}

bool KernelLogNamesDevice(const KernelLogEntry& e, std::string_view netdev, std::string_view bus_info) {
  if (e.facility != 0) return false;
  if (!bus_info.empty() && e.device.size() > bus_info.size() + 1 && e.device[0] == '+') {
    // "+<subsystem>:<name>"
    size_t colon = e.device.find(':');
    if (colon != std::string::npos && std::string_view(e.device).substr(colon + 1) == bus_info) return true;
  }
  if (!e.about.empty() && (e.about == netdev || (!bus_info.empty() && e.about == bus_info))) return true;
  return TextNamesInterface(e.text, netdev);
}

std::vector<LinkLogMatch> JoinLinkKernelLog(std::span<const LinkEvent> events, std::span<const KernelLogEntry> log,
                                            const std::map<std::string, std::string>& bus_info, uint64_t window_ns) {
  std::map<std::string, std::vector<size_t>> by_device;  // event indices, by time
  for (size_t i = 0; i < events.size(); ++i)
    if (!events[i].device.empty()) by_device[events[i].device].push_back(i);
  for (auto& [device, idx] : by_device)
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return events[a].ts < events[b].ts; });
  std::vector<LinkLogMatch> out;
  for (const auto& [device, idx] : by_device) {
    auto bus = bus_info.find(device);
    std::string_view bus_address = bus == bus_info.end() ? std::string_view() : std::string_view(bus->second);
    for (size_t j = 0; j < log.size(); ++j) {
      const KernelLogEntry& e = log[j];
      if (!KernelLogNamesDevice(e, device, bus_address)) continue;
      // The nearest event in time; distances as durations (no sums of
      // absolute timestamps).
      size_t best = idx.size();
      uint64_t best_gap = 0;
      for (size_t k = 0; k < idx.size(); ++k) {
        uint64_t ts = events[idx[k]].ts;
        uint64_t gap = ts > e.ts ? ts - e.ts : e.ts - ts;
        if (gap > window_ns) continue;
        if (best == idx.size() || gap < best_gap) {
          best = k;
          best_gap = gap;
        }
      }
      if (best != idx.size()) out.push_back({idx[best], j});
    }
  }
  std::stable_sort(out.begin(), out.end(), [&](const LinkLogMatch& a, const LinkLogMatch& b) {
    if (a.event != b.event) return a.event < b.event;
    return log[a.entry].ts < log[b.entry].ts;
  });
  return out;
}

}  // namespace gpunoise::model
