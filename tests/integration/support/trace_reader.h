// Reads a trace file back with full libprotobuf, for assertions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::testing {

// Compressed blocks (compressed_packets) are expanded in place, so callers
// see the packets in the order the trace processor reads them.
std::optional<perfetto::Trace> ReadTrace(const std::string& path, std::string* error = nullptr);

// How many top-level packets of the file are compressed blocks (-1: the file
// does not parse as a trace).
int CompressedBlocks(const std::string& path);

struct CompactSwitch {
  uint64_t ts;
  uint32_t cpu;
  int32_t next_pid;
  int64_t prev_state;
  std::string next_comm;
};
std::vector<CompactSwitch> CompactSwitches(const perfetto::Trace& trace);

struct CompactWaking {
  uint64_t ts;
  uint32_t cpu;  // where the waker ran
  int32_t pid;
  int32_t target_cpu;
  int32_t prio;
  std::string comm;
  uint32_t common_flags = 0;  // waking_common_flags (0 when the column is absent)
};
std::vector<CompactWaking> CompactWakings(const perfetto::Trace& trace);

// All timestamps of one CPU's bundles, in file order, each bundle's own
// events merged in time order; used to check that a CPU's time never goes
// backwards across bundles.
std::map<uint32_t, std::vector<uint64_t>> PerCpuTimestamps(const perfetto::Trace& trace,
                                                            bool* within_bundle_sorted);

std::vector<const perfetto::FtraceEvent*> FtraceEvents(const perfetto::Trace& trace);

// The debug annotations of every TrackEvent named `event_name`, values as
// text (numbers in decimal), in file order.
using EventArgs = std::map<std::string, std::string>;
std::vector<EventArgs> TrackEventArgs(const perfetto::Trace& trace, const std::string& event_name);

// The samples of the counter track named `track_name` (timestamp, value).
std::vector<std::pair<uint64_t, double>> CounterSamples(const perfetto::Trace& trace,
                                                        const std::string& track_name);
// The names of all tracks described in the trace.
std::vector<std::string> TrackNames(const perfetto::Trace& trace);

// The integral of a rate counter whose sample holds until the next one:
// sum of value_i * (ts_{i+1} - ts_i) in seconds. Gives back the count.
double IntegrateRate(const std::vector<std::pair<uint64_t, double>>& samples);

// One CPU's ftrace bundles' events, with the bundle's CPU.
struct CpuEvent {
  uint32_t cpu;
  const perfetto::FtraceEvent* event;
};
std::vector<CpuEvent> FtraceEventsWithCpu(const perfetto::Trace& trace);

}  // namespace gpunoise::testing
