#include "analyze/nic_irqs.h"

#include <vector>

#include "model/nic_irq_name.h"

namespace gpunoise::analyze {

std::set<std::string> NetDevices(const Timeline& t) {
  std::set<std::string> devices;
  for (const auto& e : t.net.events)
    if (e.device) devices.insert(std::string(t.net.Name(e.device)));
  return devices;
}

std::map<int32_t, NicQueueIrq> NicIrqs(const Timeline& t, const NetMetadata& net) {
  std::map<int32_t, NicQueueIrq> out;
  for (const NetIrq& irq : net.irqs) out[irq.irq] = NicQueueIrq{irq.device, irq.queue, irq.effective_affinity};
  if (!out.empty()) return out;
  std::set<std::string> devices = NetDevices(t);
  for (const auto& [irq, name] : t.irq_names) {
    if (model::NicIrqName parsed = model::ParseNicIrqName(name); parsed.is_nic_queue) {
      out[irq] = NicQueueIrq{std::move(parsed.device), parsed.queue, {}};
      continue;
    }
    // An IRQ named after a device the network events mention serves it.
    for (const auto& dev : devices) {
      if (dev.size() >= 3 && name.find(dev) != std::string::npos) {
        out[irq] = NicQueueIrq{dev, model::TrailingQueueNumber(name), {}};
        break;
      }
    }
  }
  return out;
}

}  // namespace gpunoise::analyze
