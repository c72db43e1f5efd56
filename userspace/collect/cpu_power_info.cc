#include "collect/cpu_power_info.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {
namespace {

bool ReadNumber(const std::string& path, uint64_t* out) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return false;
  auto v = ParseInt64(Trim(*text));
  if (!v || *v < 0) return false;
  *out = static_cast<uint64_t>(*v);
  return true;
}

}  // namespace

std::vector<IdleStateInfo> ReadIdleStates(const std::string& sys_cpu_dir, const std::vector<int>& cpus) {
  std::vector<IdleStateInfo> out;
  for (int cpu : cpus) {
    // States are numbered from 0 without gaps (drivers/cpuidle/sysfs.c).
    for (uint32_t k = 0; k < 64; ++k) {
      std::string dir = fmt::format("{}/cpu{}/cpuidle/state{}", sys_cpu_dir, cpu, k);
      auto name = ReadFileToString(dir + "/name");
      if (!name.ok()) break;
      IdleStateInfo s;
      s.cpu = static_cast<uint32_t>(cpu);
      s.index = k;
      s.name = std::string(Trim(*name));
      ReadNumber(dir + "/latency", &s.exit_latency_us);
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<FrequencyInfo> ReadFrequencyInfo(const std::string& sys_cpu_dir, const std::vector<int>& cpus) {
  std::vector<FrequencyInfo> out;
  for (int cpu : cpus) {
    std::string dir = fmt::format("{}/cpu{}/cpufreq", sys_cpu_dir, cpu);
    uint64_t max = 0, min = 0, cur = 0;
    if (!ReadNumber(dir + "/cpuinfo_max_freq", &max) || max == 0) continue;
    ReadNumber(dir + "/cpuinfo_min_freq", &min);
    ReadNumber(dir + "/scaling_cur_freq", &cur);
    out.push_back({static_cast<uint32_t>(cpu), static_cast<uint32_t>(min), static_cast<uint32_t>(max),
                   static_cast<uint32_t>(cur)});
  }
  return out;
}

int CountNumaNodes(const std::string& sys_node_dir) {
  auto entries = ListDirectory(sys_node_dir);
  if (!entries.ok()) return 0;
  int n = 0;
  for (const std::string& e : *entries)
    if (StartsWith(e, "node") && e.size() > 4 && ParseInt64(std::string_view(e).substr(4))) ++n;
  return n;
}

SmiCounters SmiCounters::Open(const std::string& dev_cpu_dir, const std::vector<int>& cpus) {
  SmiCounters s;
  std::string first_error;
  for (int cpu : cpus) {
    std::string path = fmt::format("{}/{}/msr", dev_cpu_dir, cpu);
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
      if (first_error.empty())
        first_error = errno == ENOENT ? fmt::format("{} does not exist (no msr driver: modprobe msr; or not x86)", path)
                                      : fmt::format("failed to open {}: {}", path, std::strerror(errno));
      continue;
    }
    uint64_t v = 0;
    // A CPU without the register (AMD, a hypervisor that does not emulate
    // it) fails the read with EIO.
    if (::pread(fd.get(), &v, sizeof(v), static_cast<off_t>(kMsrSmiCount)) != static_cast<ssize_t>(sizeof(v))) {
      if (first_error.empty())
        first_error = fmt::format("failed to read MSR_SMI_COUNT (0x34) from {}: {}", path, std::strerror(errno));
      continue;
    }
    s.fds_.emplace(cpu, std::move(fd));
  }
  if (s.fds_.empty()) s.why_not_ = first_error.empty() ? "no CPUs" : first_error;
  return s;
}

std::map<int, uint64_t> SmiCounters::Read() const {
  std::map<int, uint64_t> out;
  for (const auto& [cpu, fd] : fds_) {
    uint64_t v = 0;
    if (::pread(fd.get(), &v, sizeof(v), static_cast<off_t>(kMsrSmiCount)) == static_cast<ssize_t>(sizeof(v)))
      out[cpu] = v;
  }
  return out;
}

}  // namespace gpunoise::collect
