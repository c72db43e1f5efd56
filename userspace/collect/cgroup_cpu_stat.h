// CPU bandwidth throttling of a process's cgroup: cpu.stat under the cgroup-v1
// cpu controller's mount when the process has a v1 cpu line (hybrid and
// v1-only hosts, where the quota lives), else under the cgroup-v2 mount.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/process_identity.h"

namespace gpunoise::collect {

// v2 ("nr_periods N", "nr_throttled N", "throttled_usec N") or v1
// ("throttled_time N" in ns); invalid when it has no throttling fields.
model::CgroupThrottling ParseThrottling(std::string_view text);

// Where each cgroup hierarchy is mounted, from /proc/self/mountinfo: the v2
// mount and the v1 mount of the cpu controller ("" when absent).
struct ThrottlingMounts {
  std::string v2;
  std::string v1_cpu;
};
ThrottlingMounts FindThrottlingMounts(std::string_view mountinfo);
const ThrottlingMounts& HostThrottlingMounts();  // read once

// `cgroups`: the process's lines as ProcessIdentity keeps them.
model::CgroupThrottling ReadCgroupThrottling(const std::vector<std::string>& cgroups, const ThrottlingMounts& mounts);

}  // namespace gpunoise::collect
