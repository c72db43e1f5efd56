#include "monitor/cpu_placement.h"

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/cpu_list.h"
#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::monitor {
namespace {

std::vector<int> ReadList(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return {};
  std::string_view trimmed = Trim(*text);
  if (trimmed.empty()) return {};
  auto cpus = ParseCpuList(trimmed);
  return cpus.ok() ? *cpus : std::vector<int>{};
}

std::vector<int> Without(const std::vector<int>& from, const std::vector<int>& drop) {
  std::vector<int> out;
  for (int cpu : from)
    if (std::find(drop.begin(), drop.end(), cpu) == drop.end()) out.push_back(cpu);
  return out;
}

}  // namespace

std::vector<int> CpuIsolation::All() const {
  std::vector<int> all = isolated;
  all.insert(all.end(), nohz_full.begin(), nohz_full.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

CpuIsolation ReadCpuIsolation(const std::string& sysfs_root) {
  CpuIsolation iso;
  iso.isolated = ReadList(sysfs_root + "/devices/system/cpu/isolated");
  iso.nohz_full = ReadList(sysfs_root + "/devices/system/cpu/nohz_full");
  return iso;
}

CpuIsolation ReadCpuIsolation() {
  const char* root = std::getenv("GPUNOISE_SYSFS_ROOT");
  return ReadCpuIsolation(root && *root ? root : "/sys");
}

std::vector<int> SamplerCpus(const std::vector<int>& wanted, const CpuIsolation& iso, bool include_isolated) {
  return include_isolated ? wanted : Without(wanted, iso.All());
}

std::vector<int> HousekeepingCpus(const std::vector<int>& online, const CpuIsolation& iso,
                                  const std::vector<int>& focus_cpus) {
  std::vector<int> drop = iso.All();
  drop.insert(drop.end(), focus_cpus.begin(), focus_cpus.end());
  return Without(online, drop);
}

bool PinProcessTo(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  DIR* tasks = ::opendir("/proc/self/task");
  if (!tasks) return false;
  bool ok = true;
  while (dirent* e = ::readdir(tasks)) {
    int tid = std::atoi(e->d_name);
    if (tid > 0 && ::sched_setaffinity(tid, sizeof(set), &set) != 0) ok = false;
  }
  ::closedir(tasks);
  return ok;
}

}  // namespace gpunoise::monitor
