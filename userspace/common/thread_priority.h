// The nice value and scheduling policy of one thread (Linux keeps both per
// thread), and the resource limit that lets a thread without capabilities
// come back from SCHED_IDLE or a nice it left.
#pragma once

#include <sys/types.h>

#include "common/result.h"

namespace gpunoise {

pid_t ThisThreadId();

Result<int> ThreadNice(pid_t tid);

// Sets RLIMIT_NICE so that any thread of this process may go back to
// `nice` (or above), or leave SCHED_IDLE at that nice, without a capability (the limit is 20 - nice; the
// hard limit needs CAP_SYS_RESOURCE to rise). Never lowers the limit.
// Children forked afterwards inherit it.
Status AllowNiceDownTo(int nice);

// The thread's scheduling policy (SCHED_OTHER, SCHED_IDLE, ...).
Result<int> ThreadPolicy(pid_t tid);
// SCHED_IDLE, or back to SCHED_OTHER (its nice stays what it was). Leaving
// SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE that allows the thread's
// nice (the kernel counts SCHED_IDLE as nice 20).
Status SetThreadIdle(pid_t tid, bool idle);

}  // namespace gpunoise
