#include "analyze/numa_metadata.h"

#include <algorithm>

#include "common/cpu_list.h"

namespace gpunoise::analyze {
namespace {

std::string StringArg(const MetaInstant& e, std::string_view name) {
  const model::TrackArg* a = e.Find(name);
  return a && a->type == model::TrackArg::Type::kString ? a->string_value : std::string();
}

bool IntArg(const MetaInstant& e, std::string_view name, int64_t* out) {
  const model::TrackArg* a = e.Find(name);
  return a && a->AsInt64(out);
}

std::vector<int> CpusArg(const MetaInstant& e) {
  std::string text = StringArg(e, "cpus");
  if (text.empty()) return {};
  auto cpus = ParseCpuList(text);
  return cpus.ok() ? *cpus : std::vector<int>{};
}

}  // namespace

int32_t NumaMetadata::NodeOfCpu(int cpu) const {
  auto it = cpu_node.find(cpu);
  return it == cpu_node.end() ? -1 : it->second;
}

const model::NumaDevice* NumaMetadata::Device(std::string_view kind, std::string_view name) const {
  for (const auto& d : devices)
    if (d.kind == kind && d.name == name) return &d;
  return nullptr;
}

const model::NumaDevice* NumaMetadata::DeviceByBus(std::string_view bus_id) const {
  if (bus_id.empty()) return nullptr;
  for (const auto& d : devices)
    if (d.bus_id == bus_id) return &d;
  return nullptr;
}

std::string NumaMetadata::CpusText(int32_t node) const {
  auto it = node_cpus.find(node);
  return it == node_cpus.end() || it->second.empty() ? "none" : FormatCpuList(it->second);
}

size_t NumaMetadata::CpuNodes() const {
  size_t n = 0;
  for (const auto& [node, cpus] : node_cpus) n += cpus.empty() ? 0 : 1;
  return n;
}

std::string NumaMetadata::NotMeasurableReason() const {
  if (!recorded) return "the trace has no NUMA topology (recorded without the node group, or by another recorder)";
  if (CpuNodes() < 2) return "one NUMA node with CPUs";
  for (const auto& d : devices)
    if (d.numa_node >= 0) return "";
  return "no GPU or NIC reports its NUMA node (sysfs numa_node -1)";
}

NumaMetadata ReadNumaMetadata(const Timeline& t) {
  NumaMetadata m;
  for (const MetaInstant& e : t.node_metadata) {
    int64_t v = 0;
    if (e.name == "numa node") {
      if (!IntArg(e, "node", &v) || v < 0) continue;
      m.recorded = true;
      std::vector<int> cpus = CpusArg(e);
      for (int cpu : cpus) m.cpu_node[cpu] = static_cast<int32_t>(v);
      m.node_cpus[static_cast<int32_t>(v)] = std::move(cpus);
    } else if (e.name == "numa device") {
      model::NumaDevice d;
      d.kind = StringArg(e, "kind");
      d.name = StringArg(e, "name");
      d.bus_id = model::NormalizePciBusId(StringArg(e, "bus_id"));
      if (IntArg(e, "numa_node", &v)) d.numa_node = v >= 0 ? static_cast<int32_t>(v) : -1;
      if (d.kind.empty() || d.name.empty()) continue;
      m.devices.push_back(std::move(d));
    } else if (e.name == "nic irq cpus") {
      if (!IntArg(e, "irq", &v)) continue;
      NicIrqCpus& irq = m.nic_irqs[static_cast<int32_t>(v)];
      irq.irq = static_cast<int32_t>(v);
      irq.device = StringArg(e, "device");
      if (const model::TrackArg* a = e.Find("effective"); a && a->AsInt64(&v)) irq.effective = v != 0;
      (StringArg(e, "phase") == "end" ? irq.end_cpus : irq.start_cpus) = CpusArg(e);
    } else if (e.name == "gpu bus id") {
      std::string bus = model::NormalizePciBusId(StringArg(e, "bus_id"));
      if (bus.empty()) continue;
      if (std::string uuid = StringArg(e, "uuid"); !uuid.empty()) m.gpu_bus_by_uuid[uuid] = bus;
      if (IntArg(e, "index", &v)) m.gpu_bus_by_index[v] = bus;
    }
  }
  return m;
}

}  // namespace gpunoise::analyze
