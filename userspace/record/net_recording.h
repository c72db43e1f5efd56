// The network part of a recording: reads the network collectors' in-kernel
// counters at a fixed interval, turns them into counter-track samples, and
// writes the totals, the NIC IRQ map and the nic collector's status.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collect/collector.h"
#include "collect/kallsyms_loader.h"
#include "collect/link_stats.h"
#include "collect/net_collector.h"
#include "common/result.h"
#include "model/device_statistics.h"
#include "model/net_counters.h"
#include "record/nic_recording.h"

namespace gpunoise::collect {
class DropsCollector;
class NicCollector;
}  // namespace gpunoise::collect

namespace gpunoise::perfetto {
class TraceSink;
}

namespace gpunoise::record {

class NetRecording {
 public:
  // Creates the napi, netdev, drops and nic collectors and appends them to
  // `collectors` (the session starts, stops and reports on them like any
  // other).
  // The kernel's counters are sampled every `interval_ns`, the NICs' own
  // every `nic_interval_ns` (link notifications at every pass regardless).
  // Without `options.device_counters` (no program on every packet), packets
  // and bytes per device come from the kernel's device statistics of the
  // recorder's own network namespace, read at the same interval.
  NetRecording(const collect::NetOptions& options, uint64_t interval_ns, uint64_t nic_interval_ns,
               std::vector<std::unique_ptr<collect::Collector>>& collectors);

  // After every collector started: the baseline the totals count from.
  // The network counters are recorded when a network collector started or,
  // without per-packet counters, when the device statistics can be read (no
  // tracepoint needed); the NICs' own counters and link events either way.
  // Drop locations are named from `symbols` at the end (null: not named).
  void Begin(perfetto::TraceSink& sink, std::shared_ptr<collect::KernelSymbolsLoader> symbols);
  // Writes the samples whose interval has passed. Returns how long until
  // the next one is due (ns), for the drain loop's timeout.
  Result<uint64_t> MaybeSample(perfetto::TraceSink& sink, uint64_t now);
  // When the recording ends, before the collectors detach (a detach can take
  // a second or more): reads the last counters, so the network tracks end
  // where the others do.
  void Freeze();
  // After the collectors stopped: last sample, totals, NIC status (at the
  // frozen time; freezes first if Freeze was not called).
  Status Finish(perfetto::TraceSink& sink);
  // At the very end, with the recording's kernel log: its lines that belong
  // to a link event, beside the event (NicRecording::AttachKernelLog).
  Result<size_t> AttachKernelLog(perfetto::TraceSink& sink, std::span<const model::KernelLogEntry> log) {
    return nic_counters_.AttachKernelLog(sink, log);
  }

  // "network: 2 devices, rx 1.2M packets, tx 1.2M packets (the devices' own
  // statistics, this network namespace), 1.2M packets through NAPI polls,
  // ..., 35.0k drops (most: SOCKET_RCVBUFF 35.0k); not counted: napi (...);
  // nic: no NIC-driver tracepoints on this node"
  std::string Summary() const;

 private:
  std::shared_ptr<collect::KernelSymbolsLoader> symbols_;
  model::NetSnapshot Read();
  void RefreshNames(const model::NetSnapshot& snapshot);

  uint64_t interval_ns_;
  uint64_t nic_interval_ns_;
  uint64_t next_nic_ = 0;
  std::vector<collect::NetCollector*> collectors_;
  collect::NetCollector* napi_ = nullptr;
  collect::NetCollector* netdev_ = nullptr;
  collect::DropsCollector* drops_ = nullptr;
  collect::NicCollector* nic_ = nullptr;
  model::NetNames names_;
  NicRecording nic_counters_;  // the NIC's own counters, link events, PCIe
  model::NetSnapshot baseline_, previous_, final_;
  bool from_device_statistics_ = false;  // device counts from netlink, not per packet
  model::DeviceStatisticsSeries device_statistics_;
  bool device_statistics_warned_ = false;
  collect::LinkStatsReader link_stats_;
  bool device_statistics_read_ = false;  // the last Read() got them
  bool active_ = false;
  bool frozen_ = false;
  uint64_t frozen_ts_ = 0;
};

// Whether a device the snapshot counts (ifindex other than 0) has no name
// yet: only then are the collectors' name maps read again.
bool HasUnnamedDevice(const model::NetSnapshot& snapshot, const model::NetNames& names);

// The inode of this process's network namespace (/proc/self/ns/net).
uint32_t OwnNetnsInode();

}  // namespace gpunoise::record
