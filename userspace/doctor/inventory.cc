#include "doctor/inventory.h"

#include <algorithm>
#include <cctype>

#include "common/cpu_list.h"
#include "common/strings.h"

namespace gpunoise::doctor {
namespace {

std::optional<uint32_t> ReadHex(const SystemView& view, const std::string& path) {
  auto text = view.ReadTrimmed(path);
  if (!text) return std::nullopt;
  std::string_view s = *text;
  if (StartsWith(s, "0x") || StartsWith(s, "0X")) s.remove_prefix(2);
  if (s.empty() || s.size() > 8) return std::nullopt;
  uint32_t value = 0;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c))
                                                    ? c - '0'
                                                    : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
  }
  return value;
}

std::string LinkBaseName(const SystemView& view, const std::string& path) {
  auto target = view.ReadLink(path);
  return target.ok() ? std::string(BaseName(*target)) : std::string();
}

std::optional<PcieLink> ReadPcieLink(const SystemView& view, const std::string& dir) {
  auto current_speed = view.ReadTrimmed(dir + "/current_link_speed");
  auto max_speed = view.ReadTrimmed(dir + "/max_link_speed");
  auto current_width = view.ReadInt(dir + "/current_link_width");
  auto max_width = view.ReadInt(dir + "/max_link_width");
  if (!current_speed || !max_speed || !current_width || !max_width) return std::nullopt;
  return PcieLink{*current_speed, *max_speed, static_cast<int>(*current_width), static_cast<int>(*max_width)};
}

}  // namespace

bool LooksLikePciAddress(std::string_view name) {
  // DOMAIN:BUS:DEV.FN with a 4- or 5-digit (VMD) hex domain: "0000:17:00.0".
  auto colon1 = name.find(':');
  if (colon1 < 4 || colon1 == std::string_view::npos) return false;
  if (name.size() != colon1 + 8) return false;
  std::string_view rest = name.substr(colon1);
  if (rest[0] != ':' || rest[3] != ':' || rest[6] != '.') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (i == colon1 || i == colon1 + 3 || i == colon1 + 6) continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

PciKind ClassifyPci(uint32_t class_code, uint32_t vendor) {
  uint32_t base = class_code >> 16;
  if (base == 0x03 && vendor == kNvidiaVendorId) return PciKind::kGpu;
  if (base == 0x02) return PciKind::kNic;
  if ((class_code >> 8) == 0x0108) return PciKind::kNvme;
  return PciKind::kOther;
}

std::string_view PciKindName(PciKind kind) {
  switch (kind) {
    case PciKind::kGpu: return "GPU";
    case PciKind::kNic: return "NIC";
    case PciKind::kNvme: return "NVMe";
    case PciKind::kOther: return "PCI device";
  }
  return "PCI device";
}

std::optional<std::vector<int>> ReadCpuListFile(const SystemView& view, std::string_view path) {
  auto text = view.ReadTrimmed(path);
  if (!text) return std::nullopt;
  if (text->empty()) return std::vector<int>{};
  auto cpus = ParseCpuList(*text);
  if (!cpus.ok()) return std::nullopt;
  return std::move(cpus).value();
}

std::vector<int> ReadOnlineCpus(const SystemView& view) {
  auto cpus = ReadCpuListFile(view, "/sys/devices/system/cpu/online");
  return cpus ? *cpus : std::vector<int>{};
}

std::vector<PciDevice> ReadPciDevices(const SystemView& view) {
  std::vector<PciDevice> out;
  for (const std::string& bdf : view.List("/sys/bus/pci/devices")) {
    if (!LooksLikePciAddress(bdf)) continue;
    std::string link = "/sys/bus/pci/devices/" + bdf;
    PciDevice d;
    d.bdf = bdf;
    auto resolved = view.Resolve(link);
    d.sysfs_path = resolved.ok() ? *resolved : link;
    for (std::string_view part : Split(d.sysfs_path, '/')) {
      if (StartsWith(part, "pci") && part.find(':') != std::string_view::npos) d.host_bridge = std::string(part);
      else if (LooksLikePciAddress(part) && part != bdf) d.bridges.emplace_back(part);
    }
    const std::string& dir = d.sysfs_path;
    d.class_code = ReadHex(view, dir + "/class").value_or(0);
    d.vendor = ReadHex(view, dir + "/vendor").value_or(0);
    d.device = ReadHex(view, dir + "/device").value_or(0);
    d.driver = LinkBaseName(view, dir + "/driver");
    d.numa_node = static_cast<int>(view.ReadInt(dir + "/numa_node").value_or(-1));
    d.local_cpus = ReadCpuListFile(view, dir + "/local_cpulist").value_or(std::vector<int>{});
    for (const std::string& irq : view.List(dir + "/msi_irqs"))
      if (auto n = ParseInt64(irq)) d.irqs.push_back(static_cast<int>(*n));
    std::sort(d.irqs.begin(), d.irqs.end());
    if (d.irqs.empty()) {
      if (auto legacy = view.ReadInt(dir + "/irq"); legacy && *legacy > 0) d.irqs.push_back(static_cast<int>(*legacy));
    }
    d.link = ReadPcieLink(view, dir);
    d.kind = ClassifyPci(d.class_code, d.vendor);
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<NetInterface> ReadNetInterfaces(const SystemView& view) {
  std::vector<NetInterface> out;
  for (const std::string& name : view.List("/sys/class/net")) {
    std::string dir = "/sys/class/net/" + name;
    if (!view.Exists(dir + "/ifindex")) continue;  // bonding_masters and other files
    NetInterface n;
    n.name = name;
    n.ifindex = static_cast<int>(view.ReadInt(dir + "/ifindex").value_or(0));
    n.operstate = view.ReadTrimmed(dir + "/operstate").value_or("");
    if (auto flags = ReadHex(view, dir + "/flags")) n.flags = *flags;
    // speed fails to read (EINVAL) while the link is down, and reads -1 when
    // the driver cannot tell (virtual NICs).
    if (auto speed = view.ReadInt(dir + "/speed"); speed && *speed > 0) n.speed_mbps = *speed;
    n.duplex = view.ReadTrimmed(dir + "/duplex").value_or("");
    if (auto mtu = view.ReadInt(dir + "/mtu")) n.mtu = static_cast<int>(*mtu);
    if (view.Exists(dir + "/device")) {
      auto dev = view.Resolve(dir + "/device");
      if (dev.ok()) {
        // The PCI function is the last PCI address on the device path (virtio
        // NICs sit one level below theirs: .../0000:00:03.0/virtio2).
        for (std::string_view part : Split(*dev, '/'))
          if (LooksLikePciAddress(part)) n.pci_bdf = std::string(part);
      }
      n.driver = LinkBaseName(view, dir + "/device/driver");
      if (n.driver == "virtio_net") n.virtio_features = view.ReadTrimmed(dir + "/device/features").value_or("");
    }
    for (const std::string& entry : view.List(dir))
      if (StartsWith(entry, "lower_")) n.lowers.push_back(entry.substr(6));
    for (const std::string& q : view.List(dir + "/queues")) {
      if (StartsWith(q, "rx-")) n.rx_queues.push_back(q);
      else if (StartsWith(q, "tx-")) n.tx_queues.push_back(q);
    }
    auto by_number = [](const std::string& a, const std::string& b) {
      return ParseInt64(std::string_view(a).substr(3)).value_or(0) <
             ParseInt64(std::string_view(b).substr(3)).value_or(0);
    };
    std::sort(n.rx_queues.begin(), n.rx_queues.end(), by_number);
    std::sort(n.tx_queues.begin(), n.tx_queues.end(), by_number);
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<NumaNode> ReadNumaNodes(const SystemView& view) {
  std::vector<NumaNode> out;
  for (const std::string& entry : view.List("/sys/devices/system/node")) {
    if (!StartsWith(entry, "node")) continue;
    auto id = ParseInt64(std::string_view(entry).substr(4));
    if (!id) continue;
    NumaNode node;
    node.id = static_cast<int>(*id);
    node.cpus = ReadCpuListFile(view, "/sys/devices/system/node/" + entry + "/cpulist").value_or(std::vector<int>{});
    out.push_back(std::move(node));
  }
  std::sort(out.begin(), out.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return out;
}

std::map<int, std::string> ReadIrqNames(const SystemView& view) {
  std::map<int, std::string> names;
  auto text = view.Read("/proc/interrupts");
  if (!text.ok()) return names;
  auto lines = Split(*text, '\n');
  if (lines.empty()) return names;
  size_t cpu_columns = 0;
  for (std::string_view word : Split(lines[0], ' '))
    if (StartsWith(word, "CPU")) ++cpu_columns;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto irq = ParseInt64(Trim(line.substr(0, colon)));
    if (!irq) continue;
    // After the per-CPU counts come the chip, the hwirq and the actions;
    // the actions are everything after the chip's and hwirq's columns.
    std::vector<std::string_view> words;
    for (std::string_view w : Split(line.substr(colon + 1), ' '))
      if (!w.empty()) words.push_back(w);
    if (words.size() <= cpu_columns + 2) continue;
    std::string name;
    for (size_t w = cpu_columns + 2; w < words.size(); ++w) {
      if (!name.empty()) name += ' ';
      name += words[w];
    }
    names[static_cast<int>(*irq)] = name;
  }
  return names;
}

IrqAffinity ReadIrqAffinity(const SystemView& view, int irq, const std::map<int, std::string>& names) {
  IrqAffinity a;
  a.irq = irq;
  if (auto it = names.find(irq); it != names.end()) a.name = it->second;
  std::string dir = "/proc/irq/" + std::to_string(irq);
  a.effective = ReadCpuListFile(view, dir + "/effective_affinity_list");
  a.allowed = ReadCpuListFile(view, dir + "/smp_affinity_list");
  if (a.name.empty()) a.name = view.ReadTrimmed("/sys/kernel/irq/" + std::to_string(irq) + "/actions").value_or("");
  return a;
}

const PciDevice* Inventory::FindPci(const std::string& bdf) const {
  for (const auto& d : pci)
    if (d.bdf == bdf) return &d;
  return nullptr;
}

std::vector<const PciDevice*> Inventory::OfKind(PciKind kind) const {
  std::vector<const PciDevice*> out;
  for (const auto& d : pci)
    if (d.kind == kind) out.push_back(&d);
  return out;
}

std::vector<const NetInterface*> Inventory::PhysicalNics() const {
  std::vector<const NetInterface*> out;
  for (const auto& n : nics)
    if (!n.pci_bdf.empty()) out.push_back(&n);
  return out;
}

int Inventory::NodeOfCpu(int cpu) const {
  for (const auto& node : numa_nodes)
    if (std::binary_search(node.cpus.begin(), node.cpus.end(), cpu)) return node.id;
  return -1;
}

Inventory ReadInventory(const SystemView& view) {
  Inventory inv;
  inv.pci = ReadPciDevices(view);
  inv.nics = ReadNetInterfaces(view);
  inv.numa_nodes = ReadNumaNodes(view);
  inv.online_cpus = ReadOnlineCpus(view);
  inv.irq_names = ReadIrqNames(view);
  return inv;
}

}  // namespace gpunoise::doctor
