#include "collect/numa_topology.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "common/cpu_list.h"
#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {
namespace {

constexpr uint32_t kNvidiaVendor = 0x10de;

std::optional<std::string> ReadTrimmed(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return std::nullopt;
  return std::string(Trim(*text));
}

std::optional<uint32_t> ReadHex(const std::string& path) {
  auto text = ReadTrimmed(path);
  if (!text || text->empty()) return std::nullopt;
  size_t used = 0;
  try {
    unsigned long v = std::stoul(*text, &used, 16);
    if (used != text->size() || v > UINT32_MAX) return std::nullopt;
    return static_cast<uint32_t>(v);
  } catch (...) {
    return std::nullopt;
  }
}

// sysfs writes -1 where the firmware gives no proximity (one node, most VMs).
int32_t ReadNumaNode(const std::string& dir) {
  auto text = ReadTrimmed(dir + "/numa_node");
  if (!text) return -1;
  auto v = ParseInt64(*text);
  return v && *v >= 0 && *v < 4096 ? static_cast<int32_t>(*v) : -1;
}

bool IsPciAddress(std::string_view s) { return !model::NormalizePciBusId(s).empty(); }

}  // namespace

model::NumaTopology ReadNumaTopology(const std::string& sys_root) {
  model::NumaTopology topo;
  const std::string node_dir = sys_root + "/devices/system/node";
  if (auto entries = ListDirectory(node_dir); entries.ok())
    for (const std::string& e : *entries) {
      if (!StartsWith(e, "node")) continue;
      auto id = ParseInt64(std::string_view(e).substr(4));
      if (!id || *id < 0) continue;
      model::NumaNodeCpus n;
      n.node = static_cast<int32_t>(*id);
      if (auto text = ReadTrimmed(node_dir + "/" + e + "/cpulist"); text && !text->empty())
        if (auto cpus = ParseCpuList(*text); cpus.ok()) n.cpus = *cpus;
      topo.nodes.push_back(std::move(n));
    }
  std::sort(topo.nodes.begin(), topo.nodes.end(),
            [](const model::NumaNodeCpus& a, const model::NumaNodeCpus& b) { return a.node < b.node; });

  // NICs: interfaces with a device behind them (lo, veth, bridges have
  // none). The PCI function is the last PCI address on the device's path: a
  // virtio NIC sits one level below its function (.../0000:00:03.0/virtio2).
  const std::string net_dir = sys_root + "/class/net";
  if (auto entries = ListDirectory(net_dir); entries.ok())
    for (const std::string& ifname : *entries) {
      std::error_code ec;
      std::filesystem::path dev = std::filesystem::canonical(net_dir + "/" + ifname + "/device", ec);
      if (ec) continue;
      model::NumaDevice d;
      d.kind = "nic";
      d.name = ifname;
      std::filesystem::path pci;
      for (std::filesystem::path p = dev; !p.empty() && p != p.root_path(); p = p.parent_path())
        if (IsPciAddress(p.filename().string())) {
          pci = p;
          break;
        }
      if (!pci.empty()) {
        d.bus_id = model::NormalizePciBusId(pci.filename().string());
        d.numa_node = ReadNumaNode(pci.string());
      } else {
        d.numa_node = ReadNumaNode(dev.string());
      }
      topo.devices.push_back(std::move(d));
    }

  const std::string pci_dir = sys_root + "/bus/pci/devices";
  if (auto entries = ListDirectory(pci_dir); entries.ok()) {
    std::vector<std::string> sorted = *entries;
    std::sort(sorted.begin(), sorted.end());
    for (const std::string& bdf : sorted) {
      const std::string dir = pci_dir + "/" + bdf;
      auto cls = ReadHex(dir + "/class");
      auto vendor = ReadHex(dir + "/vendor");
      // Display controllers: VGA 0x0300 and 3D 0x0302 (data-center GPUs).
      if (!cls || !vendor || *vendor != kNvidiaVendor) continue;
      uint32_t sub = *cls >> 8;
      if (sub != 0x0300 && sub != 0x0302) continue;
      model::NumaDevice d;
      d.kind = "gpu";
      d.bus_id = model::NormalizePciBusId(bdf);
      d.name = d.bus_id.empty() ? bdf : d.bus_id;
      d.numa_node = ReadNumaNode(dir);
      topo.devices.push_back(std::move(d));
    }
  }
  return topo;
}

std::vector<model::NicIrqAffinity> NicIrqAffinities(const model::IrqTable& irqs) {
  std::vector<model::NicIrqAffinity> out;
  for (const auto& [irq, info] : irqs) {
    if (info.device.empty()) continue;
    model::NicIrqAffinity a;
    a.irq = irq;
    a.device = info.device;
    a.effective = !info.effective_affinity.empty();
    a.cpus = a.effective ? info.effective_affinity : info.affinity;
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace gpunoise::collect
