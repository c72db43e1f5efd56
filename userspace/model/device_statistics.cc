#include "model/device_statistics.h"

namespace gpunoise::model {

void DeviceStatisticsSeries::Observe(std::span<const DeviceQueueCount> reading) {
  for (const DeviceQueueCount& r : reading) {
    auto [it, fresh] = series_.try_emplace({r.dev, r.dir});
    Series& s = it->second;
    if (fresh) {
      s.first = s.last = s.carried = r;
      s.carried.packets = s.carried.bytes = s.carried.errors = 0;
      continue;
    }
    if (r.packets < s.last.packets || r.bytes < s.last.bytes || r.errors < s.last.errors) {
      // A new device under the same ifindex: counted from its creation,
      // which was during the recording.
      s.carried.packets += s.last.packets - s.first.packets;
      s.carried.bytes += s.last.bytes - s.first.bytes;
      s.carried.errors += s.last.errors - s.first.errors;
      s.first.packets = s.first.bytes = s.first.errors = 0;
    }
    s.last = r;
  }
}

void DeviceStatisticsSeries::AppendTo(NetSnapshot* out) const {
  for (const auto& [key, s] : series_) {
    DeviceQueueCount c = s.last;
    c.packets = s.carried.packets + (s.last.packets - s.first.packets);
    c.bytes = s.carried.bytes + (s.last.bytes - s.first.bytes);
    c.errors = s.carried.errors + (s.last.errors - s.first.errors);
    out->devices.push_back(c);
  }
}

}  // namespace gpunoise::model
