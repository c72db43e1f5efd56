// Where cgroup v2 is mounted: recording filters by cgroup in the kernel and
// the report resolves a cgroup's threads, both from a path relative to it.
#pragma once

#include <string>

#include "common/result.h"

namespace gpunoise {

// "/sys/fs/cgroup", or "/sys/fs/cgroup/unified" on hybrid systems, from
// /proc/self/mountinfo.
Result<std::string> CgroupV2Mount();

}  // namespace gpunoise
