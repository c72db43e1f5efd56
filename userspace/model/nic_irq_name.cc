#include "model/nic_irq_name.h"

#include <optional>
#include <vector>

#include "common/strings.h"

namespace gpunoise::model {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != s.npos; }

// The kind from the name without its bus address and queue number. Order
// matters: "txrx"/"tx-rx" before "rx" and "tx"; control names first because
// "async" or "config" vectors sometimes carry a number too.
std::string QueueKind(std::string_view stem, int32_t queue) {
  if (Contains(stem, "config") || Contains(stem, "async") || Contains(stem, "mgmnt") ||
      Contains(stem, "ctrl") || Contains(stem, "admin") || Contains(stem, "misc") ||
      Contains(stem, "event") || Contains(stem, "-fw") || Contains(stem, "err"))
    return "control";
  if (Contains(stem, "txrx") || Contains(stem, "tx-rx") || Contains(stem, "rxtx") ||
      Contains(stem, "comp") || Contains(stem, "ntfy") || Contains(stem, "combined") ||
      Contains(stem, "queue"))
    return "txrx";
  if (Contains(stem, "input") || Contains(stem, "rx")) return "rx";
  if (Contains(stem, "output") || Contains(stem, "tx")) return "tx";
  if (queue >= 0) return "txrx";  // "eth0-3": one vector per channel
  return "";
}

bool ContainsQueueWord(std::string_view lower) {
  for (std::string_view w : {"txrx", "tx-rx", "rx-tx", "-rx-", "-tx-", "-rx", "-tx", "comp", "input",
                             "output", "ntfy", "fp-", "-q"})
    if (lower.find(w) != std::string_view::npos) return true;
  return false;
}

// The device a name marks as a NIC queue on its own, or nullopt.
std::optional<std::string> NicDeviceOf(std::string_view name) {
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
    return std::string(base.substr(0, base.find('-')));
  }
  // mlx5: mlx5_compN@pci:BDF
  if (StartsWith(lower, "mlx5_comp") || StartsWith(lower, "mlx4-")) {
    std::string dev = "mlx5";
    if (!pci.empty()) dev += "@" + std::string(pci.substr(pci.find(':') == std::string_view::npos ? 0 : pci.find(':') + 1));
    return dev;
  }
  if (!ContainsQueueWord(lower)) return std::nullopt;
  // DRIVER-DEV-TxRx-N (i40e, ice, iavf, igb), DEV-TxRx-N (ixgbe, bnxt,
  // igb), DEV-rx-N, ena-Tx-Rx-N, gve-ntfy-blkN: the device is the part
  // before the queue word.
  std::vector<std::string_view> parts = Split(base, '-');
  static constexpr std::string_view kDrivers[] = {"i40e", "ice", "iavf", "igb", "igc", "ixgbe", "e1000e",
                                                 "bnxt", "qede", "gve", "ena", "hns3", "sfc", "fm10k"};
  size_t first = 0;
  for (auto d : kDrivers)
    if (parts.size() > 2 && Lower(parts[0]) == d) first = 1;
  std::string_view device = parts.size() > first ? parts[first] : base;
  std::string dev_lower = Lower(device);
  if (dev_lower == "tx" || dev_lower == "rx" || dev_lower == "txrx" || dev_lower == "ntfy" || device.empty())
    device = parts[0];
  return std::string(device);
}

}  // namespace

int32_t TrailingQueueNumber(std::string_view s) {
  size_t i = s.size();
  while (i > 0 && IsDigit(s[i - 1])) --i;
  if (i == s.size() || s.size() - i > 6) return -1;
  int32_t v = 0;
  for (size_t j = i; j < s.size(); ++j) v = v * 10 + (s[j] - '0');
  return v;
}

NicIrqName ParseNicIrqName(std::string_view irq_name) {
  NicIrqName out;
  std::string_view name = Trim(irq_name);
  // "mlx5_comp3@pci:0000:3b:00.0", "gve-ntfy-blk0@pci:...": the bus address
  // names the device, not the queue.
  std::string_view base = name.substr(0, name.find('@'));
  out.queue = TrailingQueueNumber(base);
  std::string stem = Lower(base);
  while (!stem.empty() && IsDigit(stem.back())) stem.pop_back();
  out.kind = QueueKind(stem, out.queue);
  if (out.kind == "control") out.queue = -1;
  if (auto device = NicDeviceOf(name)) {
    out.is_nic_queue = true;
    out.device = std::move(*device);
  }
  return out;
}

}  // namespace gpunoise::model
