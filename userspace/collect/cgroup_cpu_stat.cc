#include "collect/cgroup_cpu_stat.h"

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {

model::CgroupThrottling ParseThrottling(std::string_view text) {
  model::CgroupThrottling st;
  bool throttled = false;
  for (std::string_view line : Split(text, '\n')) {
    auto sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    std::string_view key = line.substr(0, sp);
    auto value = ParseUint64(Trim(line.substr(sp + 1)));
    if (!value) continue;
    if (key == "nr_periods") st.nr_periods = *value;
    else if (key == "nr_throttled") {
      st.nr_throttled = *value;
      throttled = true;
    } else if (key == "throttled_usec") st.throttled_ns = *value * 1000;
    else if (key == "throttled_time") st.throttled_ns = *value;
  }
  st.valid = throttled;
  return st;
}

ThrottlingMounts FindThrottlingMounts(std::string_view mountinfo) {
  ThrottlingMounts m;
  for (std::string_view line : Split(mountinfo, '\n')) {
    // "... <mount point> <options> - <fstype> <source> <super options>"
    auto dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    auto after = Split(line.substr(dash + 3), ' ');
    auto before = Split(line.substr(0, dash), ' ');
    if (after.empty() || before.size() < 5) continue;
    if (after[0] == "cgroup2" && m.v2.empty()) m.v2 = std::string(before[4]);
    if (after[0] == "cgroup" && after.size() >= 3 && m.v1_cpu.empty())
      for (std::string_view opt : Split(after[2], ','))
        if (opt == "cpu") m.v1_cpu = std::string(before[4]);
  }
  return m;
}

const ThrottlingMounts& HostThrottlingMounts() {
  static const ThrottlingMounts mounts = [] {
    auto info = ReadFileToString("/proc/self/mountinfo");
    return info.ok() ? FindThrottlingMounts(*info) : ThrottlingMounts{};
  }();
  return mounts;
}

model::CgroupThrottling ReadCgroupThrottling(const std::vector<std::string>& cgroups, const ThrottlingMounts& mounts) {
  std::string v1_path, v2_path;
  for (const std::string& line : cgroups) {
    auto colon = line.find(":/");
    if (colon == std::string::npos) {
      v2_path = line;
      continue;
    }
    for (std::string_view c : Split(std::string_view(line).substr(0, colon), ','))
      if (c == "cpu") v1_path = line.substr(colon + 1);
  }
  for (const auto& [mount, path] : {std::pair{mounts.v1_cpu, v1_path}, std::pair{mounts.v2, v2_path}}) {
    if (mount.empty() || path.empty()) continue;
    std::string file = mount + (path == "/" ? "" : path) + "/cpu.stat";
    auto text = ReadFileToString(file);
    if (!text.ok()) continue;
    model::CgroupThrottling st = ParseThrottling(*text);
    if (!st.valid) continue;
    st.file = file;
    return st;
  }
  return {};
}

}  // namespace gpunoise::collect
