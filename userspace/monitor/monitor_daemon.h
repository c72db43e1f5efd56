// The monitor daemon behind `gpunoise monitor` (RunMonitor): its state
// and the helpers its files share. Start, the interval and the loop live in
// monitor_session.cc; reload, publishing and the periodic upkeep (focus,
// IRQs, pruning, NVML, the kernel log) in monitor_upkeep.cc.
#pragma once

#include "monitor/monitor_session.h"

#include "collect/kmsg_reader.h"
#include "common/privilege_drop.h"
#include <malloc.h>
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <set>
#include "collect/drops_collector.h"
#include "collect/focus_map.h"
#include "collect/irq_scanner.h"
#include "collect/irqtime_collector.h"
#include "collect/kernel_health.h"
#include "collect/link_stats.h"
#include "collect/load_heap.h"
#include "collect/napi_collector.h"
#include "collect/netdev_collector.h"
#include "collect/nic_collector.h"
#include "collect/ring_transport.h"
#include "collect/runqlat_collector.h"
#include "collect/sampler_collector.h"
#include "collect/system_checks.h"
#include "collect/tracepoint_catalog.h"
#include "common/clock.h"
#include "common/cpu_list.h"
#include "collect/nvml_api.h"
#include "collect/nvml_sampler.h"
#include "common/files.h"
#include "common/log.h"
#include "common/strings.h"
#include "common/unique_fd.h"
#include "monitor/continuous_softirq_audit.h"
#include "monitor/cpu_placement.h"
#include "monitor/finding_tracker.h"
#include "monitor/flight_recorder.h"
#include "monitor/kernel_log_triggers.h"
#include <fmt/ranges.h>
#include "monitor/focus_jobs.h"
#include "monitor/focus_resolver.h"
#include "monitor/http_endpoint.h"
#include "monitor/interval_detection.h"
#include "monitor/metrics_builder.h"
#include "monitor/nic_monitor.h"
#include "monitor/record_trigger.h"

namespace gpunoise::monitor::daemon {

// How often the IRQ table (names, NIC devices and queues) is read again:
// devices come and go, and their IRQs with them.
constexpr uint64_t kIrqRescanNs = 30'000'000'000;
// How often stale series are looked for (at most; more often when
// stale-after is short).
constexpr uint64_t kPruneEveryNs = 10'000'000'000;
// The flight recorder's drain period when no ring asks sooner.
constexpr int kDrainMs = 100;

std::vector<std::string> TriggerNodeNames();
uint32_t OwnNetnsInode();
SelfStats ReadSelfStats(double start_time_seconds);
bool BpfStatsEnabled();
FlightRecorderConfig RecorderConfig(const MonitorOptions& o, const std::string& command_text);

class Monitor {
 public:
  explicit Monitor(const MonitorRun& run) : run_(run) {}
  ~Monitor() { Shutdown(); }

  Status Start(MonitorOptions options);
  Status Loop();

 private:
  model::AggregateSnapshot Read();
  Status Interval();
  void Publish(uint64_t now);
  // The kernel log since the last call, counted by class and device.
  std::vector<model::KernelLogEntry> ReadKernelLog();
  void OpenNvml();
  void RefreshFocus(uint64_t now);
  void ReconcileSampler();
  void PlaceOwnThreads();
  void RescanIrqs(uint64_t now);
  void RefreshNames(const model::AggregateSnapshot& s);
  void ReadDeviceStatistics(model::NetSnapshot* net);
  void TrackActivity(const model::AggregateSnapshot& snapshot, const model::AggregateSnapshot& delta, uint64_t now);
  void Prune(uint64_t now);
  void HandleChanges(const FindingTracker::Changes& changes, uint64_t now);
  void Reload();
  Status ArmTimer();
  void Shutdown();
  std::vector<collect::Collector*> AggregateCollectors() const;

  const MonitorRun& run_;
  MonitorOptions options_;
  std::unique_ptr<collect::TracepointCatalog> catalog_;
  std::unique_ptr<HttpEndpoint> http_;
  std::shared_ptr<RecordTrigger> trigger_ = std::make_shared<RecordTrigger>();
  std::unique_ptr<IntervalDetection> detection_;
  std::unique_ptr<collect::FocusMap> focus_map_;
  std::unique_ptr<collect::IrqtimeCollector> irqtime_;
  std::unique_ptr<collect::RunqlatCollector> runqlat_;
  std::unique_ptr<collect::SamplerCollector> sampler_;
  std::unique_ptr<collect::RingTransport> net_transport_;
  std::vector<std::unique_ptr<collect::NetCollector>> net_;
  collect::DropsCollector* drops_ = nullptr;
  std::unique_ptr<FlightRecorder> recorder_;
  std::unique_ptr<gpu::NvmlSampler> nvml_;
  UniqueFd timer_fd_;
  UniqueFd epoll_fd_;

  model::IrqTable irqs_;
  model::NetNames names_;
  model::AggregateSnapshot previous_;
  FindingTracker tracker_;
  std::map<model::NetDeviceKey, uint64_t> device_active_;
  std::vector<int> sampler_cpus_;
  uint64_t dql_stalls_ = 0;
  // The kernel log since the monitor started, counted by class and device
  // (model/kernel_log.h), read every interval.
  std::optional<collect::KmsgReader> kmsg_;
  std::map<std::pair<std::string, std::string>, uint64_t> kernel_log_counts_;
  uint64_t kernel_log_lost_fed_ = 0;  // kmsg loss already handed to the flight recorder
  uint64_t focus_processes_ = 0;
  FocusJobs focus_jobs_;  // the focus processes' jobs, at the last refresh
  uint64_t next_focus_refresh_ = 0;
  uint64_t next_irq_scan_ = 0;
  uint64_t next_prune_ = 0;
  uint64_t intervals_ = 0;
  double start_time_seconds_ = 0;
  bool stopped_ = false;
  bool link_stats_warned_ = false;
  collect::LinkStatsReader link_stats_;
  NicMonitor nic_;  // the NIC's own counters, link state and PCIe health
  ContinuousSoftirqAudit softirq_audit_;
};


}  // namespace gpunoise::monitor::daemon
