// Processes and threads as /proc showed them at one instant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/process_identity.h"

namespace gpunoise::model {

struct ProcessInfo {
  int32_t pid = 0;
  int32_t ppid = 0;
  int32_t uid = -1;
  bool is_kthread = false;
  std::string comm;
  std::vector<std::string> cmdline;  // empty for kernel threads
  uint64_t start_from_boot_ns = 0;
  // Pid namespace, container/pod, rank/job (model/process_identity.h);
  // identity.pid is this pid once filled.
  ProcessIdentity identity;
};

struct ThreadInfo {
  int32_t tid = 0;
  int32_t tgid = 0;
  std::string name;
  // The thread's id in each pid namespace from the host's inwards
  // (/proc/TID/status NSpid); empty when the thread is in the host's only.
  std::vector<int32_t> nstid;
};

struct ProcessSnapshot {
  uint64_t ts = 0;  // CLOCK_BOOTTIME when the scan ended
  std::vector<ProcessInfo> processes;
  std::vector<ThreadInfo> threads;
};

}  // namespace gpunoise::model
