#include "monitor/kernel_log_triggers.h"

#include <fmt/format.h>

#include <map>

namespace gpunoise::monitor {

bool TriggersFlightRecorder(model::KernelLogClass cls) {
  using C = model::KernelLogClass;
  switch (cls) {
    case C::kTxTimeout:
    case C::kNicReset:
    case C::kSoftLockup:
    case C::kHardLockup:
    case C::kRcuStall:
    case C::kHungTask:
    case C::kMachineCheck:
      return true;
    default:
      return false;
  }
}

std::vector<Observation> KernelLogObservations(std::span<const model::KernelLogEntry> entries) {
  std::map<std::pair<model::KernelLogClass, std::string>, std::pair<const model::KernelLogEntry*, size_t>> groups;
  for (const model::KernelLogEntry& e : entries) {
    if (!TriggersFlightRecorder(e.cls)) continue;
    auto& g = groups[{e.cls, e.about}];
    if (!g.first) g.first = &e;
    ++g.second;
  }
  std::vector<Observation> out;
  for (const auto& [key, g] : groups) {
    const model::KernelLogEntry& first = *g.first;
    model::KernelLogMatch m = model::ClassifyKernelLog(first.text);
    Observation o;
    o.what.detector = "kernel_log";
    o.what.kind = std::string(model::KernelLogClassName(key.first));
    o.what.device = key.second;
    o.what.cpu = m.cpu;
    o.what.culprit = !m.task.empty() ? m.task : (key.second.empty() ? "kernel" : key.second);
    o.what.title = fmt::format("kernel log {}{}: {}", o.what.kind, key.second.empty() ? "" : " on " + key.second,
                               first.text);
    o.evidence.push_back(fmt::format("kernel: {}", first.text));
    if (g.second > 1) o.evidence.push_back(fmt::format("... and {} more such messages", g.second - 1));
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace gpunoise::monitor
