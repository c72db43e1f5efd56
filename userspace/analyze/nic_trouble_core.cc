#include "analyze/nic_trouble_core.h"

#include <fmt/format.h>

namespace gpunoise::analyze {

NicTroubleRule NicTroubleRule::From(const Thresholds& t) {
  NicTroubleRule r;
  r.full_budget_rate = t.Get("nic.full_budget_rate");
  r.drop_rate = t.Get("nic.drop_rate");
  r.irq_overlap_min = static_cast<uint64_t>(t.Get("nic.irq_overlap_min"));
  r.irq_overlap_share = t.Get("nic.irq_overlap_share");
  return r;
}

double PerSecond(uint64_t count, uint64_t window_ns) {
  return window_ns ? static_cast<double>(count) * 1e9 / static_cast<double>(window_ns) : 0;
}

Finding NicTroubleFinding(std::string_view kind, const std::string& device) {
  Finding f;
  f.detector = "nic_trouble";
  f.kind = std::string(kind);
  f.device = device;
  f.culprit = device.empty() ? "network stack" : device;
  f.culprit_kind = "device";
  return f;
}

Finding DropsFinding(const std::string& device, const std::string& reason) {
  Finding f = NicTroubleFinding(nic_kind::kDrops, device);
  f.culprit = fmt::format("{} ({})", device, reason);
  return f;
}

Finding KernelHealthFinding() {
  Finding f = NicTroubleFinding(nic_kind::kKernelHealth, "");
  f.culprit = "kernel";
  f.culprit_kind = "kernel";
  return f;
}

}  // namespace gpunoise::analyze
