#include "analyze/kernel_log_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyze/format_util.h"
#include "analyze/tx_timeout_log.h"

namespace gpunoise::analyze {
namespace {

std::string Describe(model::KernelLogClass cls) {
  using C = model::KernelLogClass;
  switch (cls) {
    case C::kTxTimeout: return "NIC transmit timeout";
    case C::kLinkDown: return "link down";
    case C::kLinkUp: return "link up";
    case C::kNicReset: return "NIC reset";
    case C::kSoftLockup: return "soft lockup";
    case C::kHardLockup: return "hard lockup";
    case C::kRcuStall: return "RCU stall";
    case C::kHungTask: return "hung task";
    case C::kPageAllocFailure: return "page allocation failure";
    case C::kPcieAer: return "PCIe AER error";
    case C::kMachineCheck: return "machine check";
    case C::kThermal: return "thermal throttling";
    case C::kGpuXid: return "NVIDIA Xid";
    case C::kNone: break;
  }
  return "kernel message";
}

}  // namespace

std::string KernelLogEvidence(const model::KernelLogEntry& e, uint64_t origin) {
  // Who printed it (printk:console): a watchdog prints from the CPU it is
  // about, a driver from its interrupt, work item or the request.
  std::string by = e.cpu >= 0 ? fmt::format(" [printed on CPU {}{}]", e.cpu,
                                            e.tid >= 0 ? fmt::format(" by {} (tid {})", e.comm.empty() ? "?" : e.comm, e.tid)
                                                       : std::string())
                              : std::string();
  return fmt::format("{} kernel: {}{}", FormatOffset(e.ts, origin), e.text, by);
}

std::vector<Finding> DetectKernelLogTrouble(const AnalysisContext& ctx, std::span<const Finding> found) {
  const Timeline& t = ctx.t();
  const std::vector<size_t> claimed = TxTimeoutLinesClaimed(ctx, found);
  // (class, device) -> the entries, in time order.
  std::map<std::pair<model::KernelLogClass, std::string>, std::vector<const model::KernelLogEntry*>> groups;
  for (size_t i = 0; i < t.kernel_log.size(); ++i) {
    const model::KernelLogEntry& e = t.kernel_log[i];
    if (e.cls == model::KernelLogClass::kNone || e.ts < ctx.from || e.ts > ctx.to) continue;
    if (std::binary_search(claimed.begin(), claimed.end(), i)) continue;  // in nic_trouble's tx_timeout
    const model::KernelLogPattern* p = model::FindKernelLogPattern(e.cls);
    if (!p || p->severity == model::KernelLogSeverity::kInfo) continue;
    groups[{e.cls, e.about}].push_back(&e);
  }
  std::vector<Finding> out;
  uint64_t origin = t.start_ts;
  for (const auto& [key, entries] : groups) {
    const auto& [cls, about] = key;
    Finding f;
    f.detector = "kernel_log";
    f.kind = std::string(model::KernelLogClassName(cls));
    f.device = about;
    f.culprit = about.empty() ? "kernel" : about;
    f.culprit_kind = about.empty() ? "kernel" : "device";
    f.start = entries.front()->ts;
    f.end = entries.back()->ts;
    model::KernelLogMatch first = model::ClassifyKernelLog(entries.front()->text);
    std::string where;
    if (first.cpu >= 0) {
      f.cpus.push_back(static_cast<uint32_t>(first.cpu));
      where += fmt::format(" on CPU {}", first.cpu);
    }
    if (!first.task.empty()) where += fmt::format(" (task {})", first.task);
    f.title = fmt::format("{}{}{}: {} kernel message{} from {}", Describe(cls),
                          about.empty() ? "" : " of " + about, where, entries.size(), entries.size() == 1 ? "" : "s",
                          FormatOffset(f.start, origin));
    f.metrics.emplace_back("messages", static_cast<double>(entries.size()));
    if (first.cpu >= 0) f.metrics.emplace_back("cpu", first.cpu);
    for (size_t i = 0; i < entries.size() && i < 3; ++i) f.evidence.push_back(KernelLogEvidence(*entries[i], origin));
    if (entries.size() > 3) f.evidence.push_back(fmt::format("... and {} more", entries.size() - 3));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpunoise::analyze
