// Processes as doctor needs them: name, parent, CPU affinity, whether they
// are kernel threads, and which NVIDIA device files they hold open or mapped.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "doctor/system_view.h"

namespace gpunoise::doctor {

// PF_KTHREAD in /proc/PID/stat's flags (include/linux/sched.h).
constexpr unsigned kPfKthread = 0x00200000;

// nvidia-persistenced, DCGM's nv-hostengine, nvidia-smi, the Kubernetes
// device plugin and friends, by comm (the kernel cuts it at 15 characters).
bool IsGpuManagementDaemon(std::string_view comm);

struct ProcessInfo {
  int pid = 0;
  int ppid = 0;
  std::string comm;
  char state = '?';
  bool kernel_thread = false;
  std::optional<std::vector<int>> cpus_allowed;  // Cpus_allowed_list
  std::set<std::string> nvidia_files;  // "/dev/nvidia0", "/dev/nvidiactl", ... from fds and maps

  bool UsesGpu() const { return !nvidia_files.empty(); }
  // Uses a GPU and is not one of the driver's management daemons, which
  // hold the device files open on every GPU node without running GPU work.
  bool RunsGpuWork() const { return UsesGpu() && !IsGpuManagementDaemon(comm); }
  // GPU minor numbers of /dev/nvidiaN files (not nvidiactl, nvidia-uvm).
  std::vector<int> GpuMinors() const;
};

struct ScanOptions {
  // Reading every fd link and every maps file is the expensive part; the
  // caller turns it off when no check needs it.
  bool gpu_usage = true;
};

std::vector<ProcessInfo> ReadProcesses(const SystemView& view, const ScanOptions& options = {});
std::optional<ProcessInfo> ReadProcess(const SystemView& view, int pid, const ScanOptions& options = {});

// A process's memory placement from /proc/PID/numa_maps: resident pages per
// node and the memory policies its mappings use ("default", "bind:1", ...).
struct NumaMemory {
  std::map<int, uint64_t> pages_per_node;
  std::set<std::string> policies;
  uint64_t TotalPages() const;
};
std::optional<NumaMemory> ReadNumaMemory(const SystemView& view, int pid);
// Parses numa_maps text (public for tests).
NumaMemory ParseNumaMaps(std::string_view text);

// GPU device minor -> PCI address, from /proc/driver/nvidia/gpus/*/information.
std::map<int, std::string> ReadNvidiaMinors(const SystemView& view);

}  // namespace gpunoise::doctor
