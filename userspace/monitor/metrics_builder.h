// Turns what the monitor knows (the kernel's cumulative aggregates, names
// for IRQs and devices, findings, its own health) into metric families
// named by Prometheus conventions. docs/monitor.md lists every family.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "export/openmetrics/metric_family.h"
#include "collect/nvml_sampler.h"
#include "model/events.h"
#include "model/irq_info.h"
#include "model/kernel_aggregates.h"
#include "model/net_counters.h"
#include "model/session_info.h"
#include "monitor/nic_metrics.h"

namespace gpunoise::monitor {

// The detectors whose state is always exported (0 when quiet).
inline constexpr std::string_view kDetectorNames[] = {"softirq_storm", "interference", "nic_trouble", "kernel_log"};

// One finding that is active now (its episode has not ended).
struct ActiveFinding {
  std::string detector;  // "softirq_storm", "interference", "nic_trouble"
  std::string kind;      // detector-specific: "net_rx", "run_queue_delay", "tx_timeout", ...
  int32_t cpu = -1;
  std::string device;
  int32_t queue = -1;
  std::string culprit;
  std::string culprit_kind;  // "task", "hardirq", "softirq" (analyze::Finding's)
  int32_t culprit_tid = 0;   // when the culprit is a task
  std::string title;
};

struct FlightRecorderStats {
  bool enabled = false;
  uint64_t events = 0;        // in the ring now
  uint64_t bytes = 0;         // memory the ring holds
  double window_seconds = 0;  // time the ring covers now
  uint64_t lost = 0;          // records the kernel could not store
  std::map<std::string, uint64_t> dumps;  // result ("written", "rate_limited", ...) -> count
  uint64_t dumps_deleted = 0;             // removed to stay within the quotas
};

struct SelfStats {
  double cpu_seconds = 0;
  uint64_t resident_bytes = 0;
  double start_time_seconds = 0;  // since the Unix epoch
};

struct MetricsInput {
  const model::AggregateSnapshot* totals = nullptr;  // cumulative kernel counters
  const model::IrqTable* irqs = nullptr;
  const model::NetNames* net_names = nullptr;
  std::vector<model::CollectorReport> collectors;
  std::map<std::string, uint64_t> collector_bpf_ns;  // program run time (kernel.bpf_stats_enabled)
  std::vector<ActiveFinding> active;
  std::map<std::string, uint64_t> findings_total;  // by detector
  FlightRecorderStats flight_recorder;
  SelfStats self;
  uint64_t focus_processes = 0;
  // Focus processes by the SLURM job their cgroup names (focus_jobs.h),
  // already bounded to kMaxJobSeries.
  std::vector<std::pair<std::string, uint64_t>> focus_slurm_jobs;
  uint64_t dql_stalls = 0;  // napi:dql_stall_detected records seen
  // Softirqs the kernel counted and reported to no tracepoint, per vector,
  // since the monitor started (continuous_softirq_audit.h); absent when
  // they are not audited.
  std::optional<model::SoftirqCounts> unreported_softirqs;
  // Kernel log messages of a known class since the monitor started, by
  // (class, device), and the records /dev/kmsg lost before they were read.
  bool kernel_log_read = false;
  std::map<std::pair<std::string, std::string>, uint64_t> kernel_log;
  uint64_t kernel_log_lost = 0;
  int sample_hz = 0;
  std::vector<int> sampler_cpus;
  double interval_seconds = 0;
  uint64_t intervals = 0;
  std::string version;
  // NVML, when it loaded: the GPUs and this interval's reading of each.
  std::vector<gpu::GpuInfo> gpus;
  std::vector<gpu::GpuSample> gpu_samples;
  // The NIC's own counters, link state and PCIe health (nic_metrics.h).
  const NicMetricsInput* nic = nullptr;
};

std::vector<openmetrics::MetricFamily> BuildMetrics(const MetricsInput& in);

// "NET_RX" -> "net_rx": label values for softirq vectors.
std::string SoftirqLabel(uint32_t vec);

}  // namespace gpunoise::monitor
