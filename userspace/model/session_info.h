// What a recording was and how each collector fared: written into the trace
// (DESIGN.md decision 3: loss is data) and read back by the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpunoise::model {

enum class CollectorState {
  kActive,       // every event attached
  kDegraded,     // some events missing; see missing_events
  kDisabled,     // nothing attached; see reason
  kNotRequested,
};
std::string_view CollectorStateName(CollectorState state);

struct CollectorReport {
  std::string name;
  CollectorState state = CollectorState::kNotRequested;
  std::string reason;                       // for kDisabled
  std::vector<std::string> attached_events;  // "sched/sched_switch (tp_btf)"
  std::vector<std::string> missing_events;   // "irq_vectors/local_timer_entry"
  uint64_t events = 0;
  uint64_t lost = 0;
};

struct CpuLoss {
  uint32_t cpu = 0;
  uint64_t events = 0;    // records read from this CPU's ring
  uint64_t lost = 0;      // records the kernel could not store (ring full)
  uint64_t bytes = 0;     // record bytes read
  // sched_switch events the kernel made but never delivered (model/switch_chain.h).
  uint64_t unseen_switches = 0;
};

struct SessionInfo {
  std::string tool_version;
  std::string hostname;
  std::string command_line;
  uint64_t start_ts = 0;  // CLOCK_BOOTTIME
  uint64_t end_ts = 0;
  std::vector<CollectorReport> collectors;
  std::vector<CpuLoss> cpus;
  uint64_t bpf_recursion_misses = 0;  // program runs the kernel skipped
  std::string end_reason;  // "duration", "signal SIGINT", "disk full", ...
};

}  // namespace gpunoise::model
