#include "doctor/processes.h"

#include <algorithm>

#include "common/cpu_list.h"
#include "common/strings.h"

namespace gpunoise::doctor {
namespace {

bool IsNvidiaDevice(std::string_view path) {
  return StartsWith(path, "/dev/nvidia");
}

void ReadGpuUsage(const SystemView& view, const std::string& dir, ProcessInfo& p) {
  for (const std::string& fd : view.List(dir + "/fd")) {
    auto target = view.ReadLink(dir + "/fd/" + fd);
    if (target.ok() && IsNvidiaDevice(*target)) p.nvidia_files.insert(*target);
  }
  if (!p.nvidia_files.empty()) return;
  // A process can map a device and close the fd; maps still names it.
  // Reading maps takes the process's mmap lock: a task in uninterruptible
  // sleep may hold it, and the read would hang doctor with it.
  if (p.state == 'D') return;
  auto maps = view.Read(dir + "/maps");
  if (!maps.ok()) return;
  for (std::string_view line : Split(*maps, '\n')) {
    auto slash = line.find(" /dev/nvidia");
    if (slash == std::string_view::npos) continue;
    p.nvidia_files.insert(std::string(Trim(line.substr(slash))));
  }
}

}  // namespace

bool IsGpuManagementDaemon(std::string_view comm) {
  static constexpr std::string_view kDaemons[] = {
      "nvidia-persiste",  // nvidia-persistenced
      "nv-hostengine",    // DCGM
      "dcgm-exporter", "dcgmi", "nvidia-smi",
      "nvidia-device-p",  // nvidia-device-plugin (Kubernetes)
      "nvidia-cuda-mps",  // MPS control daemon and server
      "nvidia-fabricma",  // nvidia-fabricmanager (NVSwitch)
      "nvidia-powerd", "Xorg", "Xwayland",
  };
  for (std::string_view d : kDaemons)
    if (comm == d) return true;
  return false;
}

std::vector<int> ProcessInfo::GpuMinors() const {
  std::vector<int> minors;
  for (const auto& f : nvidia_files) {
    std::string_view rest = std::string_view(f).substr(std::string_view("/dev/nvidia").size());
    if (auto n = ParseInt64(rest)) minors.push_back(static_cast<int>(*n));
  }
  std::sort(minors.begin(), minors.end());
  minors.erase(std::unique(minors.begin(), minors.end()), minors.end());
  return minors;
}

std::optional<ProcessInfo> ReadProcess(const SystemView& view, int pid, const ScanOptions& options) {
  std::string dir = "/proc/" + std::to_string(pid);
  auto stat = view.Read(dir + "/stat");
  if (!stat.ok()) return std::nullopt;
  ProcessInfo p;
  p.pid = pid;
  // "PID (comm) S PPID ..." where comm may hold spaces and parentheses: the
  // name ends at the last ')'.
  auto open = stat->find('(');
  auto close = stat->rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  p.comm = stat->substr(open + 1, close - open - 1);
  std::vector<std::string_view> fields;
  for (std::string_view f : Split(std::string_view(*stat).substr(close + 1), ' '))
    if (!f.empty()) fields.push_back(f);
  // fields[0] is state (field 3), fields[1] ppid (4), fields[6] flags (9).
  if (fields.size() > 6) {
    p.state = fields[0].empty() ? '?' : fields[0][0];
    p.ppid = static_cast<int>(ParseInt64(fields[1]).value_or(0));
    p.kernel_thread = (ParseUint64(fields[6]).value_or(0) & kPfKthread) != 0;
  }
  if (auto status = view.Read(dir + "/status"); status.ok()) {
    for (std::string_view line : Split(*status, '\n')) {
      if (!StartsWith(line, "Cpus_allowed_list:")) continue;
      auto cpus = ParseCpuList(Trim(line.substr(18)));
      if (cpus.ok()) p.cpus_allowed = std::move(cpus).value();
    }
  }
  if (options.gpu_usage && !p.kernel_thread) ReadGpuUsage(view, dir, p);
  return p;
}

std::vector<ProcessInfo> ReadProcesses(const SystemView& view, const ScanOptions& options) {
  std::vector<ProcessInfo> out;
  for (const std::string& entry : view.List("/proc")) {
    auto pid = ParseInt64(entry);
    if (!pid || *pid <= 0) continue;
    // A process may exit between listing and reading; that is not an error.
    if (auto p = ReadProcess(view, static_cast<int>(*pid), options)) out.push_back(std::move(*p));
  }
  std::sort(out.begin(), out.end(), [](const ProcessInfo& a, const ProcessInfo& b) { return a.pid < b.pid; });
  return out;
}

uint64_t NumaMemory::TotalPages() const {
  uint64_t total = 0;
  for (const auto& [node, pages] : pages_per_node) total += pages;
  return total;
}

NumaMemory ParseNumaMaps(std::string_view text) {
  // "7f2a... bind:1 anon=10 dirty=10 N1=10 kernelpagesize_kB=4"
  NumaMemory m;
  for (std::string_view line : Split(text, '\n')) {
    std::vector<std::string_view> words;
    for (std::string_view w : Split(line, ' '))
      if (!w.empty()) words.push_back(w);
    if (words.size() < 2) continue;
    m.policies.insert(std::string(words[1]));
    uint64_t page_kb = 4;
    for (std::string_view w : words)
      if (StartsWith(w, "kernelpagesize_kB=")) page_kb = ParseUint64(w.substr(18)).value_or(4);
    for (std::string_view w : words) {
      if (w.size() < 3 || w[0] != 'N') continue;
      auto eq = w.find('=');
      if (eq == std::string_view::npos) continue;
      auto node = ParseInt64(w.substr(1, eq - 1));
      auto pages = ParseUint64(w.substr(eq + 1));
      // Count in 4 KiB units so huge pages weigh what they hold.
      if (node && pages) m.pages_per_node[static_cast<int>(*node)] += *pages * std::max<uint64_t>(1, page_kb / 4);
    }
  }
  return m;
}

std::optional<NumaMemory> ReadNumaMemory(const SystemView& view, int pid) {
  auto text = view.Read("/proc/" + std::to_string(pid) + "/numa_maps");
  if (!text.ok()) return std::nullopt;
  return ParseNumaMaps(*text);
}

std::map<int, std::string> ReadNvidiaMinors(const SystemView& view) {
  std::map<int, std::string> out;
  for (const std::string& bdf : view.List("/proc/driver/nvidia/gpus")) {
    auto info = view.Read("/proc/driver/nvidia/gpus/" + bdf + "/information");
    if (!info.ok()) continue;
    for (std::string_view line : Split(*info, '\n')) {
      if (!StartsWith(line, "Device Minor:")) continue;
      if (auto minor = ParseInt64(Trim(line.substr(13)))) out[static_cast<int>(*minor)] = bdf;
    }
  }
  return out;
}

}  // namespace gpunoise::doctor
