// Groups and the capability drop that `record` and `monitor` share; what
// each keeps, and why, is their own (record/privilege_drop.h,
// monitor/monitor_privileges.h).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/capabilities.h"
#include "common/result.h"

namespace gpunoise {

// Whether this kernel knows a capability (CAP_BPF and CAP_PERFMON came in
// 5.8).
bool KernelKnowsCapability(int cap);

// A group by name or number ("gpunoise-readers", "1001"); errors name it.
Result<gid_t> LookUpGroup(std::string_view name);

// Adds `gid` to this process's supplementary groups (all threads; glibc's
// setgroups does that), so that files it creates later can be given to that
// group by their owner without CAP_CHOWN (the monitor's dumps, written
// after the drop). Needs CAP_SETGID in every thread: call it before any
// thread has dropped its capabilities (glibc aborts the process otherwise).
Status JoinGroup(gid_t gid);

// Drops to `keep` and logs (at debug level) what stayed. `who` names the
// mode in the log line ("record", "monitor").
Status DropPrivilegesAfterAttach(const char* who, CapMask keep, const std::vector<std::string>& reasons);

}  // namespace gpunoise
