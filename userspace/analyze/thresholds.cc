#include "analyze/thresholds.h"

#include <cstdlib>

#include <fmt/format.h>

#include "common/strings.h"

namespace gpunoise::analyze {

const std::vector<ThresholdSpec>& AllThresholds() {
  static const std::vector<ThresholdSpec> kSpecs = {
      {"softirq.window", ThresholdUnit::kDuration, 100e6,
       "length of the sliding window a softirq share is measured over"},
      {"softirq.share", ThresholdUnit::kRatio, 0.30,
       "a CPU spending more than this share of a window in one softirq vector is in a storm"},
      {"softirq.ksoftirqd_share", ThresholdUnit::kRatio, 0.30,
       "ksoftirqd running more than this share of a window on its CPU is a storm"},
      {"interference.min_delay", ThresholdUnit::kDuration, 10e6,
       "a culprit must cost the focus threads at least this much time in all"},
      {"interference.min_share", ThresholdUnit::kRatio, 0.01,
       "... and at least this share of the focus threads' observed time"},
      {"interference.window", ThresholdUnit::kDuration, 100e6,
       "length of the windows ranked as a culprit's worst"},
      {"nic.window", ThresholdUnit::kDuration, 1e9,
       "window over which NIC event rates are measured"},
      {"nic.full_budget_rate", ThresholdUnit::kRate, 100,
       "NAPI polls per second that used their whole budget, on one device and CPU"},
      {"nic.drop_rate", ThresholdUnit::kRate, 100, "packet drops per second for one reason"},
      {"nic.saturation_drop_rate", ThresholdUnit::kRate, 1,
       "drops per second the NIC itself counted on one queue (ethtool -S) for nic_saturation"},
      {"nic.link_log_window", ThresholdUnit::kDuration, 2e9,
       "kernel log lines naming a device this near one of its link events belong to that event"},
      {"nic.tx_timeout_log_window", ThresholdUnit::kDuration, 2e9,
       "TX-timeout kernel log lines of a device this near its TX watchdog firing belong to that tx_timeout finding"},
      {"nic.irq_overlap_min", ThresholdUnit::kCount, 100,
       "NIC queue interrupts served on CPUs running focus threads, at least this many ..."},
      {"nic.irq_overlap_share", ThresholdUnit::kRatio, 0.005,
       "... costing the focus threads at least this share of their time (the IRQs and NET softirqs)"},
      {"gpu.min_gap", ThresholdUnit::kDuration, 100e3,
       "GPU idle gaps shorter than this (between one process's GPU work) are ignored"},
      {"gpu.min_delay", ThresholdUnit::kDuration, 5e6,
       "launching-thread delay inside GPU idle gaps needed for a finding"},
      {"gpu.min_delay_share", ThresholdUnit::kRatio, 0.10,
       "... and the share of the launcher's gap time it must be to name a culprit (else the launcher itself)"},
      {"gpu.min_idle_share", ThresholdUnit::kRatio, 0.10,
       "share of its active span a process's GPUs must sit idle for a finding"},
      {"focus.max_threads", ThresholdUnit::kCount, 4,
       "without --focus or GPU data: at most this many of the busiest non-kernel threads"},
      {"focus.min_busy_share", ThresholdUnit::kRatio, 0.25,
       "... each busy at least this share of the busiest one"},
      // Node noise beyond run-queue waits (docs/report.md, one block).
      {"throttling.min_delay", ThresholdUnit::kDuration, 10e6,
       "a CPU quota must keep the focus threads runnable but off the CPU at least this long"},
      {"throttling.min_share", ThresholdUnit::kRatio, 0.01,
       "... and at least this share of the focus threads' observed time"},
      {"placement.min_delay", ThresholdUnit::kDuration, 10e6,
       "a focus thread must wait at least this long while a CPU it may use sits idle"},
      {"placement.min_share", ThresholdUnit::kRatio, 0.01,
       "... and at least this share of its observed time"},
      {"placement.min_idle", ThresholdUnit::kDuration, 1e6,
       "idle stretches shorter than this are the load balancer's normal latency, not placement"},
      {"wakeup_chain.min_link", ThresholdUnit::kDuration, 1e6,
       "a waker that waited at least this long in a run queue before waking a focus thread is a late link"},
      {"wakeup_chain.min_delay", ThresholdUnit::kDuration, 10e6,
       "a late link must keep the focus threads blocked at least this much longer in all"},
      {"wakeup_chain.min_share", ThresholdUnit::kRatio, 0.01,
       "... and at least this share of their observed time"},
      {"steal.min_delay", ThresholdUnit::kDuration, 10e6,
       "steal time during focus threads' running time needed for a finding"},
      {"steal.min_share", ThresholdUnit::kRatio, 0.01,
       "... and its share of their observed time"},
      {"reclaim.min_delay", ThresholdUnit::kDuration, 5e6,
       "focus threads must stall at least this long in one kind of reclaim or compaction"},
      {"reclaim.min_share", ThresholdUnit::kRatio, 0.005,
       "... and at least this share of their observed time"},
      {"ipi.min_count", ThresholdUnit::kCount, 100,
       "IPI callbacks from one sender and of one function that must interrupt focus threads for a finding"},
      {"ipi.min_delay", ThresholdUnit::kDuration, 0.5e6,
       "... and the time those callbacks took at least"},
      {"ipi.max_send_gap", ThresholdUnit::kDuration, 10e6,
       "an IPI callback is attributed to the latest send of its function to its CPU at most this long before"},
      {"timer.min_delay", ThresholdUnit::kDuration, 5e6,
       "hrtimer callbacks of one function on one CPU must interrupt focus threads this long for a finding"},
      {"timer.min_share", ThresholdUnit::kRatio, 0.01,
       "... and this share of their observed time (the scheduler tick alone is well under it)"},
      {"workqueue.min_delay", ThresholdUnit::kDuration, 2e6,
       "work items of one function on one CPU must run this long while focus threads wait there"},
      {"workqueue.min_share", ThresholdUnit::kRatio, 0.005,
       "... and this share of their observed time"},
      {"idle_exit.min_state", ThresholdUnit::kCount, 1,
       "a wakeup counts when its CPU was idle in this cpuidle state or a deeper one (0 is polling)"},
      {"idle_exit.min_portion", ThresholdUnit::kRatio, 0.5,
       "... and the wait for the idle exit was at least this share of its wakeup-to-switch-in latency"},
      {"idle_exit.min_delay", ThresholdUnit::kDuration, 5e6,
       "such waits must add up to at least this much"},
      {"idle_exit.min_share", ThresholdUnit::kRatio, 0.01,
       "... and this share of the focus threads' observed time"},
      {"cpu_frequency.min_ratio", ThresholdUnit::kRatio, 0.8,
       "a CPU below this share of its maximum frequency (cpuinfo_max_freq, else the highest seen) runs reduced"},
      {"cpu_frequency.min_delay", ThresholdUnit::kDuration, 10e6,
       "focus running time at reduced frequency, weighted by the shortfall, needed for a finding"},
      {"cpu_frequency.min_share", ThresholdUnit::kRatio, 0.01,
       "... and its share of their observed time"},
      {"numa.min_moves", ThresholdUnit::kCount, 1,
       "NUMA balancing moves or swaps of focus threads to another node needed for a finding"},
      {"numa.min_pages", ThresholdUnit::kCount, 256,
       "... or pages of theirs it migrated (NUMA_MISPLACED; 256 pages are 1 MiB)"},
      {"smi.min_count", ThresholdUnit::kCount, 1,
       "SMIs (MSR_SMI_COUNT's rise on a CPU) during the recording needed for a finding"},
      {"numa.min_delay", ThresholdUnit::kDuration, 10e6,
       "a focus or GPU-launching thread must run this long on CPUs of a NUMA node other than its GPU's (or NIC's)"},
      {"numa.min_share", ThresholdUnit::kRatio, 0.05,
       "... and this share of its own running time"},
      {"numa.min_irqs", ThresholdUnit::kCount, 100,
       "interrupts a NIC's IRQs must take on CPUs off the NIC's NUMA node for a finding"},
  };
  return kSpecs;
}

Thresholds::Thresholds() {
  for (const auto& s : AllThresholds()) values_[std::string(s.name)] = s.default_value;
}

Status Thresholds::Set(std::string_view assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos)
    return MakeError("--threshold wants NAME=VALUE, got '{}'", assignment);
  std::string_view name = Trim(assignment.substr(0, eq));
  std::string_view text = Trim(assignment.substr(eq + 1));
  const ThresholdSpec* spec = nullptr;
  for (const auto& s : AllThresholds())
    if (s.name == name) spec = &s;
  if (!spec) {
    std::string known;
    for (const auto& s : AllThresholds()) known += (known.empty() ? "" : ", ") + std::string(s.name);
    return MakeError("unknown threshold '{}' (known: {})", name, known);
  }
  double value = 0;
  switch (spec->unit) {
    case ThresholdUnit::kDuration: {
      auto d = ParseDuration(text);
      if (!d.ok()) return MakeError("threshold {}: {}", name, d.error().message);
      value = static_cast<double>(*d);
      if (value <= 0) return MakeError("threshold {} must be above zero", name);
      break;
    }
    case ThresholdUnit::kRatio: {
      bool percent = EndsWith(text, "%");
      std::string num(percent ? text.substr(0, text.size() - 1) : text);
      char* end = nullptr;
      value = std::strtod(num.c_str(), &end);
      if (num.empty() || end != num.c_str() + num.size())
        return MakeError("threshold {}: '{}' is not a share (0.3 or 30%)", name, text);
      if (percent) value /= 100;
      if (value < 0 || value > 1) return MakeError("threshold {} must be between 0 and 1 (0%-100%)", name);
      break;
    }
    case ThresholdUnit::kCount:
    case ThresholdUnit::kRate: {
      std::string num(text);
      if (EndsWith(num, "/s")) num.resize(num.size() - 2);
      char* end = nullptr;
      value = std::strtod(num.c_str(), &end);
      if (num.empty() || end != num.c_str() + num.size() || value < 0)
        return MakeError("threshold {}: '{}' is not a non-negative number", name, text);
      break;
    }
  }
  values_[std::string(name)] = value;
  return OkStatus();
}

double Thresholds::Get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    fmt::print(stderr, "gpunoise: internal error: unknown threshold {}\n", name);
    std::abort();
  }
  return it->second;
}

std::string Thresholds::Format(std::string_view name) const {
  double v = Get(name);
  for (const auto& s : AllThresholds()) {
    if (s.name != name) continue;
    switch (s.unit) {
      case ThresholdUnit::kDuration:
        if (v >= 1e9) return fmt::format("{:g} s", v / 1e9);
        if (v >= 1e6) return fmt::format("{:g} ms", v / 1e6);
        return fmt::format("{:g} us", v / 1e3);
      case ThresholdUnit::kRatio: return fmt::format("{:g}%", v * 100);
      case ThresholdUnit::kCount: return fmt::format("{:g}", v);
      case ThresholdUnit::kRate: return fmt::format("{:g}/s", v);
    }
  }
  return fmt::format("{:g}", v);
}

}  // namespace gpunoise::analyze
