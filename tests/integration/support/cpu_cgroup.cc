#include "integration/support/cpu_cgroup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "collect/node_counters.h"
#include "common/files.h"

namespace gpunoise::testing {

namespace {
bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}
}  // namespace

CpuCgroup::CpuCgroup(const std::string& name, uint64_t quota_us, uint64_t period_us) {
  collect::CpuCgroupMounts m = collect::ReadCpuCgroupMounts();
  if (m.v2_has_cpu) {
    root_ = m.v2;
    version_ = 2;
  } else if (!m.v1_cpu.empty()) {
    root_ = m.v1_cpu;
    version_ = 1;
  } else {
    error_ = "no cgroup hierarchy has the cpu controller";
    return;
  }
  std::string dir = root_ + "/" + name;
  if (::mkdir(dir.c_str(), 0755) != 0) {
    error_ = "failed to create " + dir;
    return;
  }
  dir_ = dir;
  path_ = "/" + name;
  bool set = true;
  if (version_ == 2) {
    set = WriteText(dir_ + "/cpu.max", (quota_us ? std::to_string(quota_us) : std::string("max")) + " " +
                                           std::to_string(period_us));
  } else {
    set = WriteText(dir_ + "/cpu.cfs_period_us", std::to_string(period_us)) &&
          WriteText(dir_ + "/cpu.cfs_quota_us", quota_us ? std::to_string(quota_us) : std::string("-1"));
  }
  if (!set) error_ = "failed to set the quota of " + dir_;
}

CpuCgroup::~CpuCgroup() {
  if (dir_.empty()) return;
  // Anything still inside goes back to the root, then the directory goes;
  // a process that is still exiting keeps it busy for a moment.
  for (int i = 0; i < 50; ++i) {
    auto procs = ReadFileToString(dir_ + "/cgroup.procs");
    if (procs.ok()) {
      std::istringstream in(*procs);
      std::string pid;
      while (in >> pid) WriteText(root_ + "/cgroup.procs", pid);
    }
    if (::rmdir(dir_.c_str()) == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool CpuCgroup::Join(pid_t pid) const { return WriteText(dir_ + "/cgroup.procs", std::to_string(pid)); }

model::CgroupCpuStat CpuCgroup::Stat() const {
  auto text = ReadFileToString(dir_ + "/cpu.stat");
  if (!text.ok()) return {};
  return collect::ParseCpuStat(*text).value_or(model::CgroupCpuStat{});
}

}  // namespace gpunoise::testing
