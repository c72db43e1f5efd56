// `gpunoise blackbox arm` and `status` on a running kernel: what this boot
// has (a persistent instance, uncollected data), turning the instance on
// with the NIC-crash event set and the decoding markers, and how many
// seconds of history the buffer holds at the node's current event rate.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "blackbox/instance_reader.h"
#include "blackbox/last_boot_info.h"
#include "common/result.h"

namespace gpunoise::blackbox {

struct BlackBoxState {
  std::string instance_dir;
  bool instance_exists = false;
  bool persistent = false;          // has last_boot_info (a boot-mapped buffer)
  bool cmdline_reserves = false;    // /proc/cmdline has reserve_mem=...:LABEL and trace_instance=NAME...@LABEL
  std::optional<LastBootInfo> last_boot;
  bool tracing_on = false;
  uint32_t enabled_events = 0;      // events with enable = 1 in the instance
  uint64_t entries = 0;             // records in the buffer now (all CPUs)
  uint64_t buffer_kb_per_cpu = 0;
  bool armed() const { return instance_exists && tracing_on && enabled_events > 0; }
  // The previous boot's records are there and not read yet.
  bool uncollected() const { return persistent && last_boot && !last_boot->current && entries > 0; }
};

// Reads the state of `instance` under `tracefs` (and /proc/cmdline).
BlackBoxState ReadState(const std::string& tracefs, const std::string& instance,
                        const std::string& proc_cmdline_path = "/proc/cmdline");
std::string FormatState(const BlackBoxState& state);
// True when `cmdline` reserves memory under some label and maps `instance` there.
bool CmdlineMapsInstance(std::string_view cmdline, std::string_view instance);

struct ArmOptions {
  std::string tracefs = "/sys/kernel/tracing";
  std::string instance = "gpunoise_blackbox";
  // Test and drill path: create `instance` as a plain (non-persistent)
  // instance if it is missing and arm it the same way.
  bool live = false;
  bool force = false;  // discard uncollected previous-boot data
  uint64_t buffer_kb = 0;  // live instances only: per-CPU size (0: leave)
  std::chrono::milliseconds measure{1000};  // how long to watch the event rate
  std::string state_dir = "/var/lib/gpunoise/blackbox";  // where the id table is saved ("": nowhere)
};

struct CpuRate {
  uint32_t cpu = 0;
  double records_per_s = 0;
  double bytes_per_s = 0;
};

struct ArmResult {
  std::vector<std::string> enabled;
  std::vector<std::string> missing;
  size_t markers_written = 0;
  std::string saved_table;  // the on-disk copy of the markers
  std::vector<CpuRate> rates;
  uint64_t buffer_bytes_per_cpu = 0;
  // Seconds of history the busiest CPU's ring holds at the measured rate
  // (the buffer overwrites; that CPU's history is the shortest).
  std::optional<double> seconds_held;
  uint32_t busiest_cpu = 0;
};

Result<ArmResult> Arm(const ArmOptions& options);
std::string FormatArmResult(const ArmResult& result);

// Writes the id table and one wall-clock anchor into the instance's
// trace_marker, once from every CPU (what a periodic anchor does too, so
// the newest pages carry them). Returns the number of marker lines written.
Result<size_t> WriteMarkers(const std::string& instance_dir, const std::string& events_dir,
                            const std::vector<std::string>& events);

// Seconds the busiest CPU's ring of `bytes_per_cpu` holds at `rates`.
std::optional<double> SecondsHeld(uint64_t bytes_per_cpu, const std::vector<CpuRate>& rates,
                                  uint32_t* busiest_cpu = nullptr);

}  // namespace gpunoise::blackbox
