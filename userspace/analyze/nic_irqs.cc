#include "analyze/nic_irqs.h"

#include <vector>

#include "common/strings.h"

namespace gpunoise::analyze {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The number at the end of `s` ("TxRx-3" -> 3), or -1.
int32_t TrailingNumber(std::string_view s) {
  size_t i = s.size();
  while (i > 0 && IsDigit(s[i - 1])) --i;
  if (i == s.size() || s.size() - i > 6) return -1;
  int32_t v = 0;
  for (size_t j = i; j < s.size(); ++j) v = v * 10 + (s[j] - '0');
  return v;
}

bool ContainsQueueWord(std::string_view lower) {
  for (std::string_view w : {"txrx", "tx-rx", "rx-tx", "-rx-", "-tx-", "-rx", "-tx", "comp", "input",
                             "output", "ntfy", "fp-", "-q"})
    if (lower.find(w) != std::string_view::npos) return true;
  return false;
}

}  // namespace

std::optional<NicQueueIrq> ParseNicIrqName(std::string_view name) {
  name = Trim(name);
  if (name.empty()) return std::nullopt;
  std::string lower = Lower(name);
  // Storage and other devices with per-queue vectors look alike; leave them.
  for (std::string_view not_nic : {"nvme", "ahci", "xhci", "ehci", "virtio-blk", "-req.", "-config",
                                    "-virtqueues", "megasas", "mpt3sas", "timer", "acpi", "i8042",
                                    "rtc", "aerdrv", "pciehp", "dmar", "vfio", "nvidia", "ata_"})
    if (lower.find(not_nic) != std::string::npos) return std::nullopt;
  std::string_view base = name.substr(0, name.find('@'));  // "mlx5_comp3@pci:0000:3b:00.0"
  std::string_view pci = name.find('@') != std::string_view::npos ? name.substr(name.find('@') + 1)
                                                                    : std::string_view();
  // virtio-net: virtioN-input.Q / virtioN-output.Q
  // (other virtio devices: -config, -req.N (block), -rx/-tx (vsock), -input (input))
  if (StartsWith(lower, "virtio")) {
    if (lower.find("-input.") == std::string::npos && lower.find("-output.") == std::string::npos)
      return std::nullopt;
    size_t dash = base.find('-');
    return NicQueueIrq{std::string(base.substr(0, dash)), TrailingNumber(base), {}};
  }
  // mlx5: mlx5_compN@pci:BDF
  if (StartsWith(lower, "mlx5_comp") || StartsWith(lower, "mlx4-")) {
    std::string dev = "mlx5";
    if (!pci.empty()) dev += "@" + std::string(pci.substr(pci.find(':') == std::string_view::npos ? 0 : pci.find(':') + 1));
    return NicQueueIrq{dev, TrailingNumber(base), {}};
  }
  if (!ContainsQueueWord(lower)) return std::nullopt;
  // DRIVER-DEV-TxRx-N (i40e, ice, iavf, igb), DEV-TxRx-N (ixgbe, bnxt,
  // igb), DEV-rx-N, ena-Tx-Rx-N, gve-ntfy-blkN: the device is the part
  // before the queue word.
  std::vector<std::string_view> parts = Split(base, '-');
  int32_t queue = TrailingNumber(base);
  static constexpr std::string_view kDrivers[] = {"i40e", "ice", "iavf", "igb", "igc", "ixgbe", "e1000e",
                                                 "bnxt", "qede", "gve", "ena", "hns3", "sfc", "fm10k"};
  size_t first = 0;
  for (auto d : kDrivers)
    if (parts.size() > 2 && Lower(parts[0]) == d) first = 1;
  std::string_view device = parts.size() > first ? parts[first] : base;
  std::string dev_lower = Lower(device);
  if (dev_lower == "tx" || dev_lower == "rx" || dev_lower == "txrx" || dev_lower == "ntfy" || device.empty())
    device = parts[0];
  return NicQueueIrq{std::string(device), queue, {}};
}

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
    if (auto parsed = ParseNicIrqName(name)) {
      out[irq] = *parsed;
      continue;
    }
    // An IRQ named after a device the network events mention serves it.
    for (const auto& dev : devices) {
      if (dev.size() >= 3 && name.find(dev) != std::string::npos) {
        out[irq] = NicQueueIrq{dev, TrailingNumber(name), {}};
        break;
      }
    }
  }
  return out;
}

}  // namespace gpunoise::analyze
