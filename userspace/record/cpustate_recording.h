// The cpustate part of the node group (record/node_recording.h): the
// cpustate collector's idle periods, frequency changes and NUMA balancing
// events as counter tracks and instants, the CPUs' idle states and
// frequency limits from sysfs, and MSR_SMI_COUNT at both ends where the msr
// driver lets it be read. What could not be measured is written too
// ("cpustate" instant), so the report can say "not measurable on this node"
// rather than nothing.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collect/collector.h"
#include "collect/cpu_power_info.h"
#include "common/result.h"
#include "model/cpu_state.h"

namespace gpunoise::collect {
class CpustateCollector;
}

namespace gpunoise::perfetto {
class TraceSink;
}

namespace gpunoise::record {

class CpustateRecording {
 public:
  // Creates the cpustate collector (with power:cpu_idle when `idle`) and
  // appends it to `collectors`.
  CpustateRecording(bool idle, std::vector<std::unique_ptr<collect::Collector>>& collectors);

  // After the collectors started, before privileges are dropped (the msr
  // devices are opened here).
  Status Begin(perfetto::TraceSink& sink, uint64_t ts);
  // Writes what the collector logged since the last call; returns the most
  // one CPU wrote meanwhile (the caller drains sooner when it is high).
  Result<uint64_t> Drain(perfetto::TraceSink& sink);
  // After the collectors stopped: the rest of the log, the SMI counters and
  // what was measurable.
  Status Finish(perfetto::TraceSink& sink, uint64_t ts);

  void FillReport(std::vector<model::CollectorReport>& reports) const;
  // Entries the collector's logs overwrote before they were read.
  uint64_t lost() const;
  // "cpustate: 51234 idle periods, 0 frequency changes, 0 NUMA moves, ...; SMIs not measurable (...)"
  std::string Summary() const;

 private:
  collect::CpustateCollector* collector_ = nullptr;
  std::vector<int> cpus_;
  collect::SmiCounters smi_;
  std::map<int, uint64_t> smi_start_;
  int numa_nodes_ = 0;
  int64_t numa_balancing_ = -1;  // kernel.numa_balancing; -1: unknown
  bool cpufreq_ = false;          // some CPU has cpufreq in sysfs
  std::vector<model::CpuStateEvent> events_;  // reused
  std::vector<model::NumaEvent> numa_;        // reused
  uint64_t idle_count_ = 0, frequency_count_ = 0, numa_count_ = 0;
  uint64_t smi_total_ = 0;
  bool smi_read_ = false;
};

}  // namespace gpunoise::record
