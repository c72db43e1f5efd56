// Reads a trace file back with full libprotobuf, for assertions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::testing {

std::optional<perfetto::Trace> ReadTrace(const std::string& path, std::string* error = nullptr);

struct CompactSwitch {
  uint64_t ts;
  uint32_t cpu;
  int32_t next_pid;
  int64_t prev_state;
  std::string next_comm;
};
std::vector<CompactSwitch> CompactSwitches(const perfetto::Trace& trace);

// All timestamps of one CPU's bundles, in file order, each bundle's own
// events merged in time order; used to check that a CPU's time never goes
// backwards across bundles.
std::map<uint32_t, std::vector<uint64_t>> PerCpuTimestamps(const perfetto::Trace& trace,
                                                            bool* within_bundle_sorted);

std::vector<const perfetto::FtraceEvent*> FtraceEvents(const perfetto::Trace& trace);

}  // namespace gpunoise::testing
