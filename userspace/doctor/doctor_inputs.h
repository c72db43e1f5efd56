// Everything the checks judge, gathered once: the inventory, processes,
// kernel command line, focus CPUs, ethtool data, counter samples and the
// kernel log. Checks are pure functions of this (and of nothing else), so
// tests build it from fixture trees.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "doctor/ethtool_info.h"
#include "doctor/focus.h"
#include "doctor/gpu_health.h"
#include "doctor/inventory.h"
#include "doctor/kernel_cmdline.h"
#include "doctor/processes.h"
#include "doctor/system_view.h"

namespace gpunoise::doctor {

// Counters that only mean something when they grow, read once per sample.
struct Sample {
  // ifname -> statistics counter -> value (/sys/class/net/*/statistics).
  std::map<std::string, std::map<std::string, uint64_t>> nic_stats;
  // ifname -> "tx-N" -> tx_timeout (/sys/class/net/*/queues/tx-*/tx_timeout).
  std::map<std::string, std::map<std::string, uint64_t>> tx_timeouts;
  // "softlockup_count" -> value, for the /sys/kernel/*_count files present.
  std::map<std::string, uint64_t> kernel_counters;
  // PCI address -> NVML's view of the GPU (or why it could not be read).
  std::map<std::string, Result<GpuHealth>> gpus;
};

struct DoctorInputs {
  const SystemView* view = nullptr;
  Inventory inventory;
  std::vector<ProcessInfo> processes;
  std::optional<KernelCmdline> cmdline;
  Isolation isolation;
  Focus focus;
  int self_pid = 0;  // doctor's own pid when the view is live, else 0

  // ethtool data per physical NIC; a NIC missing here was not queried.
  std::map<std::string, EthtoolInfo> ethtool;
  std::string ethtool_unavailable;  // why no NIC was queried, if none was

  std::string nvml_unavailable;  // why GPU health is unknown, if it is

  std::vector<Sample> samples;  // one, or two sample_interval_ns apart
  uint64_t sample_interval_ns = 0;

  Result<std::vector<std::string>> kernel_log = Error{"not read"};
  std::optional<double> uptime_s;        // /proc/uptime, to age kernel log records
  std::optional<uint64_t> log_since_ns;  // only records younger than this count

  const Sample& First() const { return samples.front(); }
  const Sample& Last() const { return samples.back(); }
  bool HasGrowth() const { return samples.size() >= 2; }
  // CPUs not in the focus: where IRQs, daemons and kthreads should go.
  std::vector<int> Housekeeping() const;
};

}  // namespace gpunoise::doctor
