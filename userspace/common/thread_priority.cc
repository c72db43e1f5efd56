#include "common/thread_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpunoise {

pid_t ThisThreadId() { return ::gettid(); }

Result<int> ThreadNice(pid_t tid) {
  // -1 is a valid nice value: errno tells an error apart.
  errno = 0;
  int nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  if (nice == -1 && errno != 0) return MakeError("failed to read the nice value of thread {}: {}", tid, std::strerror(errno));
  return nice;
}

Status AllowNiceDownTo(int nice) {
  // RLIMIT_NICE's ceiling is 20 - rlim_cur (sched/syscalls.c, is_nice_reduction).
  const rlim_t needed = static_cast<rlim_t>(20 - nice);
  rlimit lim{};
  if (::getrlimit(RLIMIT_NICE, &lim) != 0) return MakeError("failed to read RLIMIT_NICE: {}", std::strerror(errno));
  if (lim.rlim_cur >= needed) return OkStatus();
  rlimit want{needed, lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= needed ? lim.rlim_max : needed};
  if (::setrlimit(RLIMIT_NICE, &want) != 0)
    return MakeError("failed to raise RLIMIT_NICE to {}: {}", needed, std::strerror(errno));
  return OkStatus();
}

Result<int> ThreadPolicy(pid_t tid) {
  int policy = ::sched_getscheduler(tid);
  if (policy < 0) return MakeError("failed to read the scheduling policy of thread {}: {}", tid, std::strerror(errno));
  return policy & ~SCHED_RESET_ON_FORK;
}

Status SetThreadIdle(pid_t tid, bool idle) {
  sched_param param{};
  if (::sched_setscheduler(tid, idle ? SCHED_IDLE : SCHED_OTHER, &param) != 0)
    return MakeError("failed to put thread {} under {}: {}", tid, idle ? "SCHED_IDLE" : "SCHED_OTHER", std::strerror(errno));
  return OkStatus();
}

}  // namespace gpunoise
