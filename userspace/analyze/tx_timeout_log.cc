#include "analyze/tx_timeout_log.h"

#include <algorithm>

#include "analyze/nic_metadata.h"

namespace gpunoise::analyze {
namespace {

// "+pci:0000:3b:00.0" (a DEVICE= field: "+<subsystem>:<name>") names `bus`.
bool NamesBus(std::string_view field, std::string_view bus) {
  if (field.size() < 2 || field[0] != '+') return false;
  size_t colon = field.find(':');
  return colon != std::string_view::npos && field.substr(colon + 1) == bus;
}

}  // namespace

std::map<std::string, std::string> NicBusAddresses(const AnalysisContext& ctx) {
  std::map<std::string, std::string> out;
  for (const NicDevice& d : ReadNicMetadata(ctx.t(), ctx.net).devices)
    if (!d.device.empty() && !d.bus_info.empty()) out[d.device] = d.bus_info;
  return out;
}

bool IsTxTimeoutLineOf(const model::KernelLogEntry& e, std::string_view device, std::string_view bus_info,
                       uint64_t start, uint64_t end, uint64_t window_ns) {
  if (e.cls != model::KernelLogClass::kTxTimeout || e.facility != 0 || device.empty()) return false;
  // The window as bounds on each side (no sums of absolute timestamps that
  // could overflow).
  if (e.ts < start && start - e.ts > window_ns) return false;
  if (e.ts > end && e.ts - end > window_ns) return false;
  if (e.about == device) return true;
  if (!bus_info.empty() && (e.about == bus_info || NamesBus(e.about, bus_info) || NamesBus(e.device, bus_info)))
    return true;
  // `about` prefers DEVICE= (the NIC's PCI function) over the netdev name
  // the pattern captured; the captured name is the one the tracepoint uses.
  return model::ClassifyKernelLog(e.text).device == device;
}

std::vector<size_t> TxTimeoutLinesClaimed(const AnalysisContext& ctx, std::span<const Finding> findings) {
  const auto& log = ctx.t().kernel_log;
  std::vector<size_t> out;
  bool any = false;
  for (const Finding& f : findings) any = any || (f.detector == "nic_trouble" && f.kind == "tx_timeout");
  if (!any) return out;
  const std::map<std::string, std::string> bus = NicBusAddresses(ctx);
  const uint64_t window = ctx.th().GetNs("nic.tx_timeout_log_window");
  for (const Finding& f : findings) {
    if (f.detector != "nic_trouble" || f.kind != "tx_timeout") continue;
    auto b = bus.find(f.device);
    std::string_view bus_info = b == bus.end() ? std::string_view() : std::string_view(b->second);
    for (size_t i = 0; i < log.size(); ++i)
      if (IsTxTimeoutLineOf(log[i], f.device, bus_info, f.start, f.end, window)) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gpunoise::analyze
