#include "common/cgroup_mount.h"

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise {

Result<std::string> CgroupV2Mount() {
  auto info = ReadFileToString("/proc/self/mountinfo");
  if (!info.ok()) return info.error();
  for (std::string_view line : Split(*info, '\n')) {
    // "... <mount point> <options> - cgroup2 <source> <super options>"
    auto dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    auto after = Split(line.substr(dash + 3), ' ');
    if (after.empty() || after[0] != "cgroup2") continue;
    auto before = Split(line.substr(0, dash), ' ');
    if (before.size() >= 5) return std::string(before[4]);
  }
  return MakeError("cgroup v2 is not mounted on this system");
}

}  // namespace gpunoise
