#include "analyze/numa_locality_detector.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyze/format_util.h"
#include "analyze/nic_irqs.h"
#include "common/cpu_list.h"
#include "common/strings.h"
#include "model/gpu_tracks.h"

namespace gpunoise::analyze {
namespace {

struct Home {
  int32_t node = -1;
  std::string device;  // "GPU GPU-5f2a1c3e (H200)", "NIC eth0"
  std::string kind;    // "gpu" or "nic"
};

// The NUMA node of a GPU (its group's identity: the UUID, else NVML's
// index; model/track_identity.h), through NVML's PCI address and sysfs; -1
// when unknown.
int32_t GpuNode(const NumaMetadata& numa, const model::TrackIdentity* gpu) {
  if (gpu && !gpu->gpu_uuid.empty())
    for (const auto& [uuid, bus] : numa.gpu_bus_by_uuid)
      if (!uuid.empty() && model::ShortGpuUuid(uuid) == model::ShortGpuUuid(gpu->gpu_uuid))
        if (const auto* d = numa.DeviceByBus(bus)) return d->numa_node;
  if (gpu && gpu->gpu_index >= 0)
    if (auto it = numa.gpu_bus_by_index.find(gpu->gpu_index); it != numa.gpu_bus_by_index.end())
      if (const auto* d = numa.DeviceByBus(it->second)) return d->numa_node;
  // Without NVML's addresses: when every GPU of the node sits on one NUMA
  // node, that is this GPU's too.
  std::set<int32_t> nodes;
  for (const auto& d : numa.devices)
    if (d.kind == "gpu") nodes.insert(d.numa_node);
  return nodes.size() == 1 ? *nodes.begin() : -1;
}

class Homes {
 public:
  Homes(const AnalysisContext& ctx, const NumaMetadata& numa) : ctx_(ctx) {
    std::map<uint64_t, int32_t> gpu_node;
    for (const auto& [track, name] : ctx.gpu.gpu_names)
      gpu_node[track] = GpuNode(numa, ctx.t().tracks.Identity(track));
    for (const GpuWork& w : ctx.gpu.work) {
      if (!w.gpu) continue;
      if (w.launch_tid) by_tid_[w.launch_tid].insert(w.gpu);
      if (w.pid) by_pid_[w.pid].insert(w.gpu);
    }
    gpu_node_ = std::move(gpu_node);
    // Without GPU work: the NICs the trace's traffic went through, when they
    // share one known node.
    std::set<int32_t> nic_nodes;
    std::vector<std::string> nics;
    for (const std::string& dev : NetDevices(ctx.t()))
      if (const auto* d = numa.Device("nic", dev); d && d->numa_node >= 0) {
        nic_nodes.insert(d->numa_node);
        nics.push_back(dev);
      }
    if (nic_nodes.size() == 1) nic_home_ = {*nic_nodes.begin(), "NIC " + fmt::format("{}", fmt::join(nics, ", ")), "nic"};
  }

  // The thread's home; node -1: none, or ambiguous (`*ambiguous` set).
  Home Of(int32_t tid, bool* ambiguous) const {
    *ambiguous = false;
    const std::set<uint64_t>* gpus = nullptr;
    if (auto it = by_tid_.find(tid); it != by_tid_.end()) gpus = &it->second;
    else if (auto p = by_pid_.find(ctx_.t().TgidOf(tid)); p != by_pid_.end()) gpus = &p->second;
    if (!gpus) return nic_home_;
    std::set<int32_t> nodes;
    std::vector<std::string> names;
    for (uint64_t g : *gpus) {
      auto n = gpu_node_.find(g);
      nodes.insert(n == gpu_node_.end() ? -1 : n->second);
      auto name = ctx_.gpu.gpu_names.find(g);
      names.push_back(name == ctx_.gpu.gpu_names.end() ? "GPU" : name->second);
    }
    if (nodes.size() != 1 || *nodes.begin() < 0) {
      *ambiguous = nodes.size() > 1;
      return {};
    }
    return {*nodes.begin(), fmt::format("{}", fmt::join(names, ", ")), "gpu"};
  }

 private:
  const AnalysisContext& ctx_;
  std::map<int32_t, std::set<uint64_t>> by_tid_, by_pid_;
  std::map<uint64_t, int32_t> gpu_node_;
  Home nic_home_;
};

std::vector<uint32_t> Sorted(const std::set<uint32_t>& s) { return {s.begin(), s.end()}; }

void DetectThreads(const AnalysisContext& ctx, const NumaMetadata& numa, std::vector<Finding>* out) {
  const uint64_t min_delay = ctx.th().GetNs("numa.min_delay");
  const double min_share = ctx.th().Get("numa.min_share");
  const double observed = static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));
  // Focus threads, and the threads launching GPU work (usually focus too).
  std::set<int32_t> extra;
  for (int32_t tid : ctx.gpu.launch_tids)
    if (!ctx.activities.count(tid)) extra.insert(tid);
  auto launchers = BuildActivities(ctx.t(), extra, ctx.from, ctx.to);
  Homes homes(ctx, numa);
  auto examine = [&](int32_t tid, const ThreadActivity& act, bool focus) {
    bool ambiguous = false;
    Home home = homes.Of(tid, &ambiguous);
    if (home.node < 0) return;
    uint64_t run_ns = 0, off_ns = 0, first = UINT64_MAX, last = 0;
    std::map<int32_t, uint64_t> by_node;
    std::set<uint32_t> off_cpus;
    for (const ThreadRun& r : act.runs) {
      uint64_t a = std::max(r.start, ctx.from), b = std::min(r.end, ctx.to);
      if (b <= a) continue;
      run_ns += b - a;
      int32_t node = numa.NodeOfCpu(static_cast<int>(r.cpu));
      if (node < 0 || node == home.node) continue;
      off_ns += b - a;
      by_node[node] += b - a;
      off_cpus.insert(r.cpu);
      first = std::min(first, a);
      last = std::max(last, b);
    }
    const double run_share = static_cast<double>(off_ns) / static_cast<double>(std::max<uint64_t>(1, run_ns));
    if (off_ns < min_delay || run_share < min_share) return;
    Finding f;
    f.detector = "numa_locality";
    f.kind = "off_node_thread";
    int32_t worst = by_node.begin()->first;
    for (const auto& [node, ns] : by_node)
      if (ns > by_node[worst]) worst = node;
    f.culprit = fmt::format("the CPUs of NUMA node {} (the scheduler placed it there)", worst);
    f.culprit_kind = "numa_node";
    f.cpus = Sorted(off_cpus);
    f.focus_tids = {tid};
    f.start = first;
    f.end = last;
    f.cost_ns = off_ns;
    f.cost_share = static_cast<double>(off_ns) / observed;
    std::string who = ctx.t().DescribeThread(tid);
    f.title = fmt::format("{}{} ran {} on {} of NUMA node {}, away from its {} on node {} ({} of its running time)",
                          who, focus ? "" : ", which launches GPU work,", FormatNs(off_ns), CpuPhrase(f.cpus), worst,
                          home.device, home.node, FormatShare(run_share));
    f.metrics = {{"off_node_ns", static_cast<double>(off_ns)},
                 {"running_ns", static_cast<double>(run_ns)},
                 {"running_share", run_share},
                 {"home_node", static_cast<double>(home.node)},
                 {"other_node", static_cast<double>(worst)},
                 {"focus", focus ? 1.0 : 0.0},
                 {"share", f.cost_share}};
    for (const auto& [node, ns] : by_node)
      f.evidence.push_back(fmt::format("node {} (CPUs {}): {} of its {} running", node,
                                       numa.CpusText(node), FormatNs(ns), FormatNs(run_ns)));
    f.evidence.push_back(fmt::format("its {} is on node {} ({}; CPUs {})", home.kind == "gpu" ? "GPU" : "NIC",
                                     home.node, home.kind == "gpu" ? "sysfs numa_node of the GPU's PCI function"
                                                                   : "sysfs numa_node of the NIC its traffic used",
                                     numa.CpusText(home.node)));
    out->push_back(std::move(f));
  };
  for (const auto& [tid, act] : ctx.activities) examine(tid, act, true);
  for (const auto& [tid, act] : launchers) examine(tid, act, false);
}

void DetectIrqs(const AnalysisContext& ctx, const NumaMetadata& numa, std::vector<Finding>* out) {
  const uint64_t min_irqs = static_cast<uint64_t>(ctx.th().Get("numa.min_irqs"));
  const double observed = static_cast<double>(std::max<uint64_t>(1, ctx.focus_observed_ns));
  std::set<std::string> used = NetDevices(ctx.t());
  std::map<std::string, std::vector<const NicIrqCpus*>> by_device;
  for (const auto& [irq, cpus] : numa.nic_irqs) by_device[cpus.device].push_back(&cpus);
  for (const auto& [device, irqs] : by_device) {
    const model::NumaDevice* nic = numa.Device("nic", device);
    if (!nic || nic->numa_node < 0) continue;
    // The NICs the focus threads' traffic used, when the trace has network
    // events; every NIC otherwise.
    if (!used.empty() && !used.count(device)) continue;
    uint64_t interrupts = 0, handler_ns = 0, focus_ns = 0, first = UINT64_MAX, last = 0;
    std::set<uint32_t> off_cpus;
    std::set<int32_t> focus_tids;
    std::vector<std::string> lines;
    size_t off_irqs = 0;
    bool allowed_only = false;
    for (const NicIrqCpus* irq : irqs) {
      std::set<int> cpus(irq->start_cpus.begin(), irq->start_cpus.end());
      cpus.insert(irq->end_cpus.begin(), irq->end_cpus.end());
      std::set<int> off;
      for (int cpu : cpus)
        if (int32_t n = numa.NodeOfCpu(cpu); n >= 0 && n != nic->numa_node) off.insert(cpu);
      if (off.empty()) continue;
      ++off_irqs;
      allowed_only |= !irq->effective;
      uint64_t n_irq = 0;
      for (int cpu : off) {
        if (cpu < 0 || static_cast<size_t>(cpu) >= ctx.t().cpus.size()) continue;
        for (const IntrSlice& s : ctx.t().cpus[static_cast<size_t>(cpu)].hardirqs) {
          if (s.id != irq->irq || s.end <= ctx.from || s.start >= ctx.to) continue;
          ++n_irq;
          uint64_t a = std::max(s.start, ctx.from), b = std::min(s.end, ctx.to);
          handler_ns += b - a;
          if (s.tid && ctx.focus.count(s.tid)) {
            focus_ns += b - a;
            focus_tids.insert(s.tid);
          }
          first = std::min(first, a);
          last = std::max(last, b);
          off_cpus.insert(static_cast<uint32_t>(cpu));
        }
      }
      interrupts += n_irq;
      std::vector<int> start(irq->start_cpus), end(irq->end_cpus);
      lines.push_back(fmt::format("{}: {} CPUs {}{}; {} interrupts there", ctx.t().IrqName(irq->irq),
                                  irq->effective ? "effective" : "allowed",
                                  FormatCpuList(start.empty() ? end : start),
                                  !end.empty() && end != start ? " at the start, " + FormatCpuList(end) + " at the end" : "",
                                  n_irq));
    }
    if (!off_irqs || interrupts < min_irqs) continue;
    Finding f;
    f.detector = "numa_locality";
    f.kind = "nic_irq_off_node";
    f.device = device;
    f.culprit = fmt::format("the IRQ affinity of {} ({} IRQs on CPUs off node {})", device, off_irqs, nic->numa_node);
    f.culprit_kind = "irq_affinity";
    f.cpus = Sorted(off_cpus);
    f.focus_tids.assign(focus_tids.begin(), focus_tids.end());
    f.start = first;
    f.end = last;
    f.cost_ns = focus_ns;
    f.cost_share = static_cast<double>(focus_ns) / observed;
    f.title = fmt::format("{} of {}'s {} IRQs are delivered to CPUs off its NUMA node {} ({}): {} interrupts on {}, "
                          "{} of handler time{}",
                          off_irqs, device, irqs.size(), nic->numa_node, allowed_only ? "allowed masks" : "effective affinity",
                          interrupts, CpuPhrase(f.cpus), FormatNs(handler_ns),
                          focus_ns ? fmt::format(", {} of it interrupting focus threads", FormatNs(focus_ns)) : "");
    f.metrics = {{"irqs", static_cast<double>(irqs.size())},
                 {"off_node_irqs", static_cast<double>(off_irqs)},
                 {"interrupts", static_cast<double>(interrupts)},
                 {"handler_ns", static_cast<double>(handler_ns)},
                 {"focus_ns", static_cast<double>(focus_ns)},
                 {"nic_node", static_cast<double>(nic->numa_node)},
                 {"share", f.cost_share}};
    f.evidence = std::move(lines);
    f.evidence.push_back(fmt::format("{} is on node {} (sysfs numa_node of {}; its CPUs {})", device, nic->numa_node,
                                     nic->bus_id.empty() ? "its device" : nic->bus_id,
                                     numa.CpusText(nic->numa_node)));
    out->push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> DetectNumaLocality(const AnalysisContext& ctx, const NumaMetadata& numa) {
  std::vector<Finding> out;
  if (!numa.NotMeasurableReason().empty()) return out;
  DetectThreads(ctx, numa, &out);
  DetectIrqs(ctx, numa, &out);
  return out;
}

}  // namespace gpunoise::analyze
