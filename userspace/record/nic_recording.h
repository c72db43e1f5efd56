// The NIC's own view during a recording (part of the network recording):
// every device's `ethtool -S` and standard-group counters and link state at
// each --nic-interval, link notifications as they arrive, and PCIe link
// health of the NICs and GPUs (at most once a second: sysfs reads of every
// GPU are not free). Written through perfetto::TraceSink::nic_tracks().
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collect/link_monitor.h"
#include "collect/nic_sampler.h"
#include "collect/pcie_health.h"
#include "common/result.h"
#include "model/kernel_log.h"
#include "model/nic_counter_tracker.h"

namespace gpunoise::perfetto {
class TraceSink;
}

namespace gpunoise::record {

class NicRecording {
 public:
  NicRecording();

  // Baseline reading at the start.
  Status Begin(perfetto::TraceSink& sink);
  // Link notifications pending now (every pass of the drain loop).
  Status Poll(perfetto::TraceSink& sink, uint64_t now);
  // One counter reading (every --nic-interval).
  Status Sample(perfetto::TraceSink& sink, uint64_t now);
  // When the recording ends, before the collectors detach: the last reading.
  void Freeze(uint64_t ts);
  // The last reading (frozen, else now) and totals at `ts`.
  Status Finish(perfetto::TraceSink& sink, uint64_t ts);

  // After the kernel log was read (at the very end): the lines naming a
  // device near one of its link events, as instants beside the event on
  // the device's track (model/link_kernel_log.h). Returns how many.
  Result<size_t> AttachKernelLog(perfetto::TraceSink& sink, std::span<const model::KernelLogEntry> log);

  // "nic counters: eth0 (virtio_net) 20 counters, 0 drops, 0 pause frames, 0 link changes; ..."
  std::string Summary() const;

 private:
  Status ReadPcie(perfetto::TraceSink& sink, uint64_t now, bool force);
  Status WriteUpdate(perfetto::TraceSink& sink, const model::NicTrackerUpdate& update);

  collect::NicSampler sampler_;
  std::optional<collect::LinkMonitor> links_;
  collect::PcieHealthReader pcie_;
  model::NicCounterTracker tracker_;
  std::vector<model::PcieLinkState> pcie_first_, pcie_last_;
  uint64_t next_pcie_ = 0;
  std::optional<std::vector<model::NicReading>> frozen_;
  uint64_t frozen_ts_ = 0;
  bool active_ = false;
  std::vector<model::LinkEvent> events_;  // every link event written, for the kernel log join
};

}  // namespace gpunoise::record
