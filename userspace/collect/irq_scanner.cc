#include "collect/irq_scanner.h"

#include <cstdint>
#include <set>

#include "common/cpu_list.h"
#include "common/files.h"
#include "common/strings.h"
#include "model/nic_irq_name.h"

namespace gpunoise::collect {

model::IrqTable ParseInterrupts(std::string_view text) {
  model::IrqTable table;
  auto lines = Split(text, '\n');
  if (lines.empty()) return table;
  size_t ncpus = 0;
  for (std::string_view tok : Split(Trim(lines[0]), ' '))
    if (StartsWith(tok, "CPU")) ++ncpus;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    auto irq = ParseInt64(line.substr(0, colon));
    if (!irq) continue;  // NMI, LOC, RES...: system vectors, not numbered IRQs
    if (*irq < 0 || *irq > INT32_MAX) continue;  // no IRQ has such a number
    // After the per-CPU counts come the chip, the hw irq and the action names.
    std::vector<std::string_view> tokens;
    for (std::string_view tok : Split(line.substr(colon + 1), ' '))
      if (!tok.empty()) tokens.push_back(tok);
    if (tokens.size() <= ncpus) continue;
    model::IrqInfo info;
    info.irq = static_cast<int32_t>(*irq);
    // The action name is the last token; shared lines list several
    // separated by ", ", so take everything after the hw-irq column.
    size_t name_start = std::min(tokens.size() - 1, ncpus + 2);
    std::string name;
    for (size_t t = name_start; t < tokens.size(); ++t) {
      if (!name.empty()) name += ' ';
      name += tokens[t];
    }
    info.name = name;
    table[info.irq] = std::move(info);
  }
  return table;
}

model::IrqTable ScanIrqs(const std::string& proc_root) {
  auto text = ReadFileToString(proc_root + "/interrupts");
  if (!text.ok()) return {};
  model::IrqTable table = ParseInterrupts(*text);
  for (auto& [irq, info] : table) {
    std::string dir = proc_root + "/irq/" + std::to_string(irq);
    if (auto a = ReadFileToString(dir + "/smp_affinity_list"); a.ok())
      if (auto cpus = ParseCpuList(Trim(*a)); cpus.ok()) info.affinity = *cpus;
    if (auto a = ReadFileToString(dir + "/effective_affinity_list"); a.ok())
      if (auto cpus = ParseCpuList(Trim(*a)); cpus.ok()) info.effective_affinity = *cpus;
  }
  return table;
}

namespace {

std::set<int32_t> IrqsOfBusDevice(const std::string& device_dir) {
  std::set<int32_t> irqs;
  // virtio's net device sits on a virtio bus device whose PCI parent owns
  // the MSI-X vectors; a plain PCI NIC owns them itself.
  for (const std::string& dir : {device_dir, device_dir + "/.."}) {
    if (auto entries = ListDirectory(dir + "/msi_irqs"); entries.ok()) {
      for (const auto& e : *entries)
        if (auto n = ParseInt64(e)) irqs.insert(static_cast<int32_t>(*n));
      if (!irqs.empty()) return irqs;
    }
  }
  if (auto legacy = ReadFileToString(device_dir + "/irq"); legacy.ok())
    if (auto n = ParseInt64(Trim(*legacy)); n && *n > 0) irqs.insert(static_cast<int32_t>(*n));
  return irqs;
}

void Assign(model::IrqInfo& info, const std::string& dev) {
  if (!info.device.empty()) return;
  model::NicIrqName parsed = model::ParseNicIrqName(info.name);
  info.device = dev;
  info.queue = parsed.queue;
  info.queue_kind = parsed.kind;
}

}  // namespace

void MapNicIrqs(model::IrqTable* irqs, const std::string& sys_root) {
  auto devices = ListDirectory(sys_root + "/class/net");
  if (!devices.ok()) return;
  // Names first: "eth0-TxRx-3" names its interface even where two
  // interfaces share one PCI function.
  for (const std::string& dev : *devices) {
    for (auto& [irq, info] : *irqs) {
      std::string_view name = info.name;
      size_t at = name.find(dev);
      if (at == name.npos) continue;
      size_t after = at + dev.size();
      bool starts_word = at == 0 || name[at - 1] == '-' || name[at - 1] == ' ';
      bool ends_word = after < name.size() && (name[after] == '-' || name[after] == '_');
      if (starts_word && ends_word) Assign(info, dev);
    }
  }
  for (const std::string& dev : *devices) {
    std::string device_dir = sys_root + "/class/net/" + dev + "/device";
    if (!PathExists(device_dir)) continue;  // virtual devices (lo, veth, bridges)
    for (int32_t irq : IrqsOfBusDevice(device_dir)) {
      auto it = irqs->find(irq);
      if (it != irqs->end()) Assign(it->second, dev);
    }
  }
}

}  // namespace gpunoise::collect
