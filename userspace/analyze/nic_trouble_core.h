// The nic_trouble rules, one for the report and the monitor: what makes a
// TX timeout, a DQL stall, full-budget NAPI polls, drops of one reason, NIC
// interrupts on focus CPUs and a kernel health counter a finding, given
// counts in one window of a stated length, and the finding both build on
// (detector, kind, culprit). The report's windows are nic.window over
// per-event records, or the sample period of the collectors' rate counters;
// the monitor's window is its interval (docs/report.md, "Window semantics").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analyze/finding.h"
#include "analyze/thresholds.h"

namespace gpunoise::analyze {

namespace nic_kind {
inline constexpr std::string_view kTxTimeout = "tx_timeout";
inline constexpr std::string_view kDqlStall = "dql_stall";
inline constexpr std::string_view kNapiFullBudget = "napi_full_budget";
inline constexpr std::string_view kDrops = "drops";
inline constexpr std::string_view kIrqAffinityOverlap = "irq_affinity_overlap";
inline constexpr std::string_view kKernelHealth = "kernel_health";
}  // namespace nic_kind

struct NicTroubleRule {
  double full_budget_rate = 0;   // nic.full_budget_rate, per second
  double drop_rate = 0;          // nic.drop_rate, per second
  uint64_t irq_overlap_min = 0;  // nic.irq_overlap_min
  double irq_overlap_share = 0;  // nic.irq_overlap_share

  static NicTroubleRule From(const Thresholds& t);

  // Any TX watchdog firing, DQL stall or rise of a kernel trouble counter.
  static bool AnyEvent(uint64_t count) { return count > 0; }
  // Rates are per second of the window they were counted in.
  bool FullBudgetRateReached(double per_s) const { return per_s >= full_budget_rate; }
  bool DropRateReached(double per_s) const { return per_s >= drop_rate; }
  // NIC queue interrupts on focus CPUs: this many, costing the focus threads
  // this share of their observed time (the IRQs and the NET softirqs there).
  bool IrqOverlapReached(uint64_t interrupts, double cost_share) const {
    return interrupts >= irq_overlap_min && cost_share >= irq_overlap_share;
  }
};

double PerSecond(uint64_t count, uint64_t window_ns);

// Detector "nic_trouble", the kind, the device; the culprit is the device
// ("network stack" without one), of kind "device".
Finding NicTroubleFinding(std::string_view kind, const std::string& device);

// Drops of one reason on one device: the culprit "eth0 (SOCKET_RCVBUFF)".
Finding DropsFinding(const std::string& device, const std::string& reason);

// A kernel trouble counter ("softlockup_count", ...) that rose: kind
// "kernel_health", culprit "kernel".
Finding KernelHealthFinding();

}  // namespace gpunoise::analyze
