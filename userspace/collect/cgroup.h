// Resolves a cgroup-v2 directory to what the kernel-side filter compares:
// its kernfs id (the directory's inode) and its depth below the root.
#pragma once

#include <cstdint>
#include <string>

#include "common/cgroup_mount.h"
#include "common/result.h"

namespace gpunoise::collect {

struct CgroupRef {
  std::string path;  // absolute path of the directory
  uint64_t id = 0;
  int level = 0;     // 0 is the root cgroup
};

// `path` may be absolute ("/sys/fs/cgroup/system.slice") or relative to the
// cgroup-v2 mount ("system.slice/foo.service").
Result<CgroupRef> ResolveCgroup(const std::string& path);

using ::gpunoise::CgroupV2Mount;  // common/cgroup_mount.h

}  // namespace gpunoise::collect
