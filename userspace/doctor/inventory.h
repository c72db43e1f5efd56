// What the node is made of, read from sysfs and procfs through a SystemView:
// PCI devices (GPUs, NICs, NVMe) with their NUMA node, local CPUs, PCIe path
// and IRQs; network interfaces; NUMA nodes; IRQ affinities. Parsing only:
// no judgement here (that is the checks' job).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doctor/system_view.h"

namespace gpunoise::doctor {

constexpr uint32_t kNvidiaVendorId = 0x10de;

struct PcieLink {
  std::string current_speed;  // "16.0 GT/s PCIe", as sysfs writes it
  std::string max_speed;
  int current_width = 0;
  int max_width = 0;
};

enum class PciKind { kGpu, kNic, kNvme, kOther };

struct PciDevice {
  std::string bdf;          // "0000:17:00.0"
  std::string sysfs_path;   // resolved: /sys/devices/pci0000:00/.../0000:17:00.0
  std::string host_bridge;  // "pci0000:00"
  std::vector<std::string> bridges;  // BDFs of the PCI bridges above it, root port first
  uint32_t class_code = 0;  // 0x030200
  uint32_t vendor = 0;
  uint32_t device = 0;
  std::string driver;       // empty when unbound
  int numa_node = -1;
  std::vector<int> local_cpus;
  std::vector<int> irqs;    // MSI/MSI-X vectors, else the legacy INTx line
  std::optional<PcieLink> link;
  PciKind kind = PciKind::kOther;
};

// GPUs are NVIDIA (0x10de) display controllers (class 0x03xxxx: VGA 0x0300,
// 3D 0x0302); no driver needed. NICs are network (0x02xxxx) controllers,
// NVMe is 0x010802.
PciKind ClassifyPci(uint32_t class_code, uint32_t vendor);
std::string_view PciKindName(PciKind kind);

struct NetInterface {
  std::string name;
  int ifindex = 0;
  std::string pci_bdf;      // empty for virtual interfaces (lo, veth, bridge)
  std::string driver;
  std::string operstate;    // "up", "down", "unknown"
  uint32_t flags = 0;       // IFF_* from sysfs "flags"
  std::optional<int64_t> speed_mbps;  // absent or -1 when the driver does not know
  std::string duplex;       // "full", "half", "unknown", or empty
  std::optional<int> mtu;
  std::vector<std::string> lowers;  // lower devices (bond slaves, VLAN parent)
  std::vector<std::string> rx_queues;  // "rx-0", ...
  std::vector<std::string> tx_queues;
  // virtio NICs: the negotiated virtio feature bits ('0'/'1', bit 0 first),
  // from the virtio device's "features" file.
  std::string virtio_features;
};

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
};

struct IrqAffinity {
  int irq = 0;
  std::string name;  // the action name from /proc/interrupts ("mlx5_comp3@pci:...")
  std::optional<std::vector<int>> effective;  // effective_affinity_list
  std::optional<std::vector<int>> allowed;    // smp_affinity_list
};

struct Inventory {
  std::vector<PciDevice> pci;
  std::vector<NetInterface> nics;   // every /sys/class/net entry
  std::vector<NumaNode> numa_nodes;
  std::vector<int> online_cpus;
  std::map<int, std::string> irq_names;  // from /proc/interrupts

  const PciDevice* FindPci(const std::string& bdf) const;
  std::vector<const PciDevice*> OfKind(PciKind kind) const;
  // Interfaces backed by a PCI function.
  std::vector<const NetInterface*> PhysicalNics() const;
  // The NUMA node whose CPUs include `cpu`, or -1.
  int NodeOfCpu(int cpu) const;
};

Inventory ReadInventory(const SystemView& view);

std::vector<PciDevice> ReadPciDevices(const SystemView& view);
std::vector<NetInterface> ReadNetInterfaces(const SystemView& view);
std::vector<NumaNode> ReadNumaNodes(const SystemView& view);
std::map<int, std::string> ReadIrqNames(const SystemView& view);
IrqAffinity ReadIrqAffinity(const SystemView& view, int irq, const std::map<int, std::string>& names);
// Online CPUs of the viewed system; empty when unreadable.
std::vector<int> ReadOnlineCpus(const SystemView& view);
// A CPU list file ("0-3,8"); nullopt when absent or malformed, empty for "".
std::optional<std::vector<int>> ReadCpuListFile(const SystemView& view, std::string_view path);

bool LooksLikePciAddress(std::string_view name);

}  // namespace gpunoise::doctor
