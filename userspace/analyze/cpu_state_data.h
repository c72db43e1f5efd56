// What the cpustate part of a recording wrote (export/perfetto/node_tracks.h):
// each CPU's idle periods (from its idle state counter: identity
// node_counter, cpu_idle_state), its frequency samples and limits, its idle states' names, the NUMA balancing
// events, the SMI counters at both ends, and what could be measured at all.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analyze/finding.h"
#include "analyze/timeline.h"
#include "model/cpu_state.h"
#include "model/events.h"

namespace gpunoise::analyze {

struct IdleSpan {
  uint64_t start = 0, end = 0;
  int32_t state = 0;  // cpuidle state index
};

struct IdleStateName {
  std::string name;
  uint64_t exit_latency_us = 0;
};

struct CpuStateData {
  // The recording's "cpustate" instant: false for traces without it (no
  // node group, an older gpunoise, another recorder), and then nothing is
  // said about what was measurable.
  bool recorded = false;
  bool idle_recorded = false, frequency_recorded = false, cpufreq_sysfs = false;
  bool numa_tracepoints = false, migrate_tracepoint = false, smi_recorded = false;
  int64_t numa_nodes = 0, numa_balancing = -1;
  std::string smi_unavailable;
  std::map<uint32_t, std::vector<IdleSpan>> idle;  // per CPU, sorted by start
  std::map<std::pair<uint32_t, int32_t>, IdleStateName> idle_states;  // (cpu, state)
  std::map<uint32_t, std::vector<CounterSample>> frequency;  // kHz, per CPU, sorted
  std::map<uint32_t, uint32_t> max_khz;                       // cpuinfo_max_freq
  std::vector<model::NumaEvent> numa;                         // time order
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> smi;      // cpu -> (start, end) of MSR_SMI_COUNT

  // The idle period of `cpu` that `ts` falls in; nullptr when it was not idle.
  const IdleSpan* IdleAt(uint32_t cpu, uint64_t ts) const;
  std::string StateName(uint32_t cpu, int32_t state) const;  // "haltpoll", else "state 1"
};

CpuStateData ReadCpuStateData(const Timeline& t);

std::vector<NotMeasurable> CpuStateNotMeasurable(const CpuStateData& d);

}  // namespace gpunoise::analyze
