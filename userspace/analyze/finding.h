// A detector's verdict: what happened, where (CPUs, threads, device, IRQ),
// when (a span and its worst windows), how much (the time it cost the
// focus threads, and detector-specific numbers) and the evidence behind it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpunoise::analyze {

struct FindingWindow {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t cost_ns = 0;  // what it cost the focus threads in this window
  std::string note;      // "NET_RX 71% of CPU 1", "top culprit: hog (pid 12)"
};

struct Finding {
  std::string detector;  // "interference", "softirq_storm", "nic_trouble", "gpu_idle_gap"
  std::string kind;      // detector-specific: "run_queue_delay", "tx_timeout", ...
  std::string title;     // one line for a person
  std::string culprit;   // who or what caused it
  std::string culprit_kind;  // "task", "hardirq", "softirq", "device", "kernel"
  int32_t culprit_tid = 0;   // when the culprit is a task
  int32_t culprit_irq = -1;  // when the culprit is an IRQ
  std::string device;        // network device, when known
  int32_t queue = -1;        // NIC queue, when known
  std::vector<uint32_t> cpus;
  std::vector<int32_t> focus_tids;  // focus threads it hit
  uint64_t start = 0, end = 0;      // span of the evidence
  uint64_t cost_ns = 0;             // time it cost the focus threads (ranking)
  double cost_share = 0;            // cost / focus threads' observed time
  std::vector<FindingWindow> windows;  // worst windows, worst first
  // Detector-specific numbers, named in docs/report.md.
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::string> evidence;  // lines for a person

  double Metric(std::string_view name, double fallback = 0) const {
    for (const auto& [k, v] : metrics)
      if (k == name) return v;
    return fallback;
  }
};

// Ranks findings by the time they cost the focus threads, then by their own
// size, most costly first.
void RankFindings(std::vector<Finding>* findings);

// A kind of finding this trace cannot show, and why: "smi" because
// "/dev/cpu/0/msr does not exist", "numa_locality" because "one NUMA node
// with CPUs". A quiet report must not read as "checked".
struct NotMeasurable {
  std::string kind;
  std::string reason;
};

}  // namespace gpunoise::analyze
