// A task's ids in the pid namespaces it lives in, as the kernel's fork
// record (bpf/sched.h gn_process_fork) or /proc (NSpid/NStgid) gives them.
#pragma once

#include <array>
#include <cstdint>

namespace gpunoise::model {

// The ids in one namespace: what getpid()/gettid() return to code there.
struct PidNsIds {
  uint64_t inum = 0;   // the namespace's inode (/proc/PID/ns/pid)
  uint32_t level = 0;  // 1: a namespace made by the host's, 2: one inside that, ...
  int32_t tid = 0;
  int32_t tgid = 0;
};

// Innermost first; at most four levels (the innermost four of deeper ones).
struct PidNsChain {
  uint32_t level = 0;  // the task's level (0: host's namespace only)
  uint32_t count = 0;
  std::array<PidNsIds, 4> at{};
};

// The host's pid namespace (PROC_PID_INIT_INO, include/linux/proc_ns.h).
inline constexpr uint64_t kInitPidNsInode = 0xEFFFFFFCull;

}  // namespace gpunoise::model
