// The nice value and scheduling policy of one thread (Linux keeps both per
// thread), and the resource limit that lets a thread without capabilities
// come back from SCHED_IDLE or a nice it left.
#pragma once

#include <sys/types.h>

#include "common/result.h"

namespace gpunoise {

pid_t ThisThreadId();

Result<int> ThreadNice(pid_t tid);
// Lowering a thread (a higher nice) needs nothing; raising it needs
// CAP_SYS_NICE or an RLIMIT_NICE that allows the new value.
Status SetThreadNice(pid_t tid, int nice);

// Sets RLIMIT_NICE so that any thread of this process may go back to
// `nice` (or above) without a capability (the limit is 20 - nice; the
// hard limit needs CAP_SYS_RESOURCE to rise). Never lowers the limit.
// Children forked afterwards inherit it.
Status AllowNiceDownTo(int nice);
// Whether the calling thread, once above `nice` or under SCHED_IDLE (which
// the kernel treats as nice 20), may come back to it: its RLIMIT_NICE
// allows it, or it holds CAP_SYS_NICE.
bool CanReturnToNice(int nice);

// The thread's scheduling policy (SCHED_OTHER, SCHED_IDLE, ...).
Result<int> ThreadPolicy(pid_t tid);
// SCHED_IDLE, or back to SCHED_OTHER (its nice stays what it was). A task
// that wakes under another policy preempts a SCHED_IDLE one at once, also
// from another cgroup, where a nice value only weighs within its own.
Status SetThreadIdle(pid_t tid, bool idle);

}  // namespace gpunoise
