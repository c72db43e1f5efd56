#include "doctor/locality_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/cpu_list.h"
#include "doctor/check_util.h"
#include "doctor/cpu_set.h"

namespace gpunoise::doctor {
namespace {

struct NicDevice {
  const PciDevice* pci;
  std::string label;  // interface names, or the PCI address
};

std::vector<NicDevice> NicDevices(const DoctorInputs& in) {
  std::map<std::string, std::vector<std::string>> ifnames;
  for (const NetInterface* nic : in.inventory.PhysicalNics()) ifnames[nic->pci_bdf].push_back(nic->name);
  std::vector<NicDevice> out;
  for (const auto& d : in.inventory.pci) {
    bool backs_interface = ifnames.count(d.bdf) != 0;
    if (d.kind != PciKind::kNic && !backs_interface) continue;
    std::string label = backs_interface ? fmt::format("{} ({})", fmt::join(ifnames[d.bdf], "/"), d.bdf)
                                        : fmt::format("NIC {}", d.bdf);
    out.push_back({&d, label});
  }
  return out;
}

std::string NodeText(int node) { return node < 0 ? "no NUMA node" : fmt::format("node {}", node); }

std::string SetText(const std::set<int>& nodes) {
  std::vector<int> v(nodes.begin(), nodes.end());
  return v.size() == 1 ? fmt::format("node {}", v[0]) : fmt::format("nodes {}", FormatCpuList(v));
}

}  // namespace

std::string_view PciDistanceName(PciDistance d) {
  switch (d) {
    case PciDistance::kSwitch: return "same PCIe switch (PIX/PXB, GPUDirect-friendly)";
    case PciDistance::kHostBridge: return "same host bridge (PHB)";
    case PciDistance::kNumaNode: return "same NUMA node (NODE)";
    case PciDistance::kSystem: return "across NUMA nodes (SYS)";
  }
  return "";
}

PciDistance DistanceBetween(const PciDevice& a, const PciDevice& b, bool single_node) {
  for (const auto& bridge : a.bridges)
    if (std::find(b.bridges.begin(), b.bridges.end(), bridge) != b.bridges.end()) return PciDistance::kSwitch;
  if (!a.host_bridge.empty() && a.host_bridge == b.host_bridge) return PciDistance::kHostBridge;
  if (single_node || (a.numa_node >= 0 && a.numa_node == b.numa_node)) return PciDistance::kNumaNode;
  return PciDistance::kSystem;
}

CheckResult CheckDeviceLocality(const DoctorInputs& in) {
  const std::string id = "locality.devices";
  const char* why =
      "NCCL and GPUDirect RDMA move data between a GPU and a NIC; across the inter-socket link that "
      "costs bandwidth and latency, and under one PCIe switch it bypasses the CPU entirely";
  std::vector<const PciDevice*> gpus = in.inventory.OfKind(PciKind::kGpu);
  std::vector<NicDevice> nics = NicDevices(in);
  std::vector<std::string> nic_notes;
  for (const auto& n : nics)
    nic_notes.push_back(fmt::format("{}: {}, local CPUs {}", n.label, NodeText(n.pci->numa_node),
                                    CpuListText(n.pci->local_cpus)));
  if (gpus.empty()) {
    CheckResult r = Unknown(id,
                            fmt::format("no NVIDIA GPU (PCI class 0x03, vendor 0x10de) under /sys/bus/pci/devices; "
                                        "NICs: {}",
                                        nic_notes.empty() ? "none" : JoinLimited(nic_notes, 3)),
                            why);
    r.details = nic_notes;
    return r;
  }
  bool single_node = in.inventory.numa_nodes.size() <= 1;
  CheckResult r;
  r.id = id;
  r.why = why;
  std::vector<std::string> problems;
  size_t switch_pairs = 0;
  for (const PciDevice* gpu : gpus) {
    std::string gpu_text = fmt::format("GPU {}: {}, local CPUs {}", gpu->bdf, NodeText(gpu->numa_node),
                                       CpuListText(gpu->local_cpus));
    if (!single_node && gpu->numa_node < 0)
      problems.push_back(fmt::format("GPU {} has no NUMA node in sysfs (firmware does not report it)", gpu->bdf));
    if (nics.empty()) {
      r.details.push_back(gpu_text + "; no NIC");
      continue;
    }
    const NicDevice* best = nullptr;
    PciDistance best_distance = PciDistance::kSystem;
    for (const auto& nic : nics) {
      PciDistance d = DistanceBetween(*gpu, *nic.pci, single_node);
      if (!best || d < best_distance) {
        best = &nic;
        best_distance = d;
      }
    }
    if (best_distance == PciDistance::kSwitch) ++switch_pairs;
    if (best_distance == PciDistance::kSystem && gpu->numa_node >= 0)
      problems.push_back(fmt::format("GPU {} ({}) has no NIC on its NUMA node; nearest {} ({})", gpu->bdf,
                                     NodeText(gpu->numa_node), best->label, NodeText(best->pci->numa_node)));
    r.details.push_back(
        fmt::format("{}; nearest NIC {}: {}", gpu_text, best->label, PciDistanceName(best_distance)));
  }
  for (const auto& note : nic_notes) r.details.push_back(note);
  if (!problems.empty()) {
    r.verdict = Verdict::kWarn;
    r.saw = JoinLimited(problems, 3);
    r.fix =
        "use the NIC on each GPU's node for that GPU's rank (NCCL_IB_HCA, UCX_NET_DEVICES, or a topology file), "
        "or move cards so every GPU has a NIC on its socket; check with nvidia-smi topo -m";
    return r;
  }
  r.verdict = Verdict::kOk;
  r.saw = nics.empty()
              ? fmt::format("{} GPU(s), no physical NIC to pair with", gpus.size())
              : fmt::format("{} GPU(s), {} NIC(s){}; {} GPU(s) share a PCIe switch with a NIC", gpus.size(),
                            nics.size(), single_node ? " on one NUMA node" : ", every GPU has a NIC on its node",
                            switch_pairs);
  return r;
}

CheckResult CheckProcessLocality(const DoctorInputs& in) {
  const std::string id = "locality.processes";
  const char* why =
      "a process that runs or allocates on another NUMA node than its GPU pays the inter-socket link for "
      "every host-to-device copy and pinned-buffer access";
  std::vector<const ProcessInfo*> procs;
  for (const auto& p : in.processes) {
    bool focus_pid = std::find(in.focus.pids.begin(), in.focus.pids.end(), p.pid) != in.focus.pids.end();
    if (p.RunsGpuWork() || (focus_pid && in.focus.source == FocusSource::kPids)) procs.push_back(&p);
  }
  if (procs.empty()) return Unknown(id, "no process uses a GPU (no /dev/nvidia* in /proc/*/fd or maps)", why);
  std::vector<const PciDevice*> gpus = in.inventory.OfKind(PciKind::kGpu);
  if (gpus.empty()) return Unknown(id, "processes hold /dev/nvidia* but no NVIDIA GPU is under /sys/bus/pci", why);
  CheckResult r;
  r.id = id;
  r.why = why;
  if (in.inventory.numa_nodes.size() <= 1) {
    r.verdict = Verdict::kOk;
    r.saw = fmt::format("{} GPU process(es); one NUMA node, so all CPUs and memory are local", procs.size());
    return r;
  }
  std::map<int, std::string> minors = ReadNvidiaMinors(*in.view);
  std::vector<std::string> problems;
  std::vector<std::string> fix_nodes;
  for (const ProcessInfo* p : procs) {
    std::set<int> gpu_nodes;
    std::vector<std::string> used;
    for (int minor : p->GpuMinors()) {
      auto it = minors.find(minor);
      if (it == minors.end()) continue;
      if (const PciDevice* d = in.inventory.FindPci(it->second); d && d->numa_node >= 0) {
        gpu_nodes.insert(d->numa_node);
        used.push_back(d->bdf);
      }
    }
    if (gpu_nodes.empty()) {
      // Device minors unknown (no /proc/driver/nvidia): every GPU's node.
      for (const PciDevice* g : gpus)
        if (g->numa_node >= 0) gpu_nodes.insert(g->numa_node);
    }
    if (gpu_nodes.empty()) {
      r.details.push_back(fmt::format("pid {} ({}): its GPUs have no NUMA node in sysfs", p->pid, p->comm));
      continue;
    }
    std::string label = fmt::format("pid {} ({})", p->pid, p->comm);
    std::string gpu_text = used.empty() ? SetText(gpu_nodes) + " (GPUs)"
                                        : fmt::format("GPU {} on {}", JoinLimited(used, 2), SetText(gpu_nodes));
    std::set<int> cpu_nodes;
    if (p->cpus_allowed)
      for (int cpu : *p->cpus_allowed)
        if (int node = in.inventory.NodeOfCpu(cpu); node >= 0) cpu_nodes.insert(node);
    bool problem = false;
    if (!cpu_nodes.empty()) {
      bool any_local = false, any_remote = false;
      for (int n : cpu_nodes) (gpu_nodes.count(n) ? any_local : any_remote) = true;
      if (!any_local) {
        problems.push_back(fmt::format("{} uses {} but may only run on {}", label, gpu_text, SetText(cpu_nodes)));
        problem = true;
      } else if (any_remote) {
        problems.push_back(fmt::format("{} uses {} but may run on {}", label, gpu_text, SetText(cpu_nodes)));
        problem = true;
      }
    }
    if (auto mem = ReadNumaMemory(*in.view, p->pid)) {
      for (const auto& policy : mem->policies) {
        auto colon = policy.find(':');
        if (colon == std::string::npos) continue;
        auto nodes = ParseCpuList(policy.substr(colon + 1));
        if (!nodes.ok()) continue;
        bool local = false;
        for (int n : *nodes) local |= gpu_nodes.count(n) != 0;
        if (!local) {
          problems.push_back(fmt::format("{} has memory policy {} away from {}", label, policy, gpu_text));
          problem = true;
          break;
        }
      }
      uint64_t total = mem->TotalPages(), local = 0;
      for (const auto& [node, pages] : mem->pages_per_node)
        if (gpu_nodes.count(node)) local += pages;
      // Below 1 MiB resident the split says nothing.
      if (total >= 256 && local * 2 < total) {
        problems.push_back(fmt::format("{}: {:.0f}% of its resident memory is off {}", label,
                                       100.0 * static_cast<double>(total - local) / static_cast<double>(total),
                                       SetText(gpu_nodes)));
        problem = true;
      }
      r.details.push_back(fmt::format("{}: {}, CPUs on {}, {:.0f}% of {} resident pages local", label, gpu_text,
                                      cpu_nodes.empty() ? std::string("unknown") : SetText(cpu_nodes),
                                      total ? 100.0 * static_cast<double>(local) / static_cast<double>(total) : 100.0,
                                      total));
    } else {
      r.details.push_back(fmt::format("{}: {}, CPUs on {}, numa_maps unreadable", label, gpu_text,
                                      cpu_nodes.empty() ? std::string("unknown") : SetText(cpu_nodes)));
    }
    if (problem) fix_nodes.push_back(std::to_string(*gpu_nodes.begin()));
  }
  if (!problems.empty()) {
    r.verdict = Verdict::kWarn;
    r.saw = JoinLimited(problems, 3);
    r.fix = fmt::format(
        "start each rank bound to its GPU's node: numactl --cpunodebind={0} --membind={0} CMD "
        "(srun --cpu-bind=ldoms --gpu-bind=closest under SLURM)",
        fix_nodes.front());
    return r;
  }
  r.verdict = Verdict::kOk;
  r.saw = fmt::format("{} GPU process(es) run and allocate on their GPUs' NUMA nodes", procs.size());
  return r;
}

}  // namespace gpunoise::doctor
