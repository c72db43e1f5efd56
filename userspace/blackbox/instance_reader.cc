#include "blackbox/instance_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/files.h"
#include "common/strings.h"
#include "common/unique_fd.h"

namespace gpunoise::blackbox {

Result<CpuBufferStats> ParseCpuBufferStats(std::string_view text) {
  CpuBufferStats s;
  bool have_entries = false;
  for (std::string_view line : Split(text, '\n')) {
    auto colon = line.find(':');
    if (colon == line.npos) continue;
    std::string_view key = Trim(line.substr(0, colon));
    auto value = ParseUint64(Trim(line.substr(colon + 1)));
    if (!value) continue;  // "oldest event ts:  123.456" is not a count
    if (key == "entries") {
      s.entries = *value;
      have_entries = true;
    } else if (key == "overrun") {
      s.overrun = *value;
    } else if (key == "commit overrun") {
      s.commit_overrun = *value;
    } else if (key == "bytes") {
      s.bytes = *value;
    } else if (key == "dropped events") {
      s.dropped_events = *value;
    } else if (key == "read events") {
      s.read_events = *value;
    }
  }
  if (!have_entries) return MakeError("no 'entries:' line in the per-CPU stats");
  return s;
}

Result<std::vector<uint32_t>> InstanceCpus(const std::string& instance_dir) {
  GN_ASSIGN_OR_RETURN(auto names, ListDirectory(instance_dir + "/per_cpu"));
  std::vector<uint32_t> cpus;
  for (const std::string& n : names) {
    if (!StartsWith(n, "cpu")) continue;
    if (auto id = ParseUint64(std::string_view(n).substr(3))) cpus.push_back(static_cast<uint32_t>(*id));
  }
  std::sort(cpus.begin(), cpus.end());
  if (cpus.empty()) return MakeError("no per_cpu/cpuN directories in {}", instance_dir);
  return cpus;
}

Result<std::vector<CpuPages>> ReadInstancePages(const std::string& instance_dir,
                                                const PageLayout& layout, size_t max_pages) {
  GN_ASSIGN_OR_RETURN(auto cpus, InstanceCpus(instance_dir));
  std::vector<CpuPages> out;
  for (uint32_t cpu : cpus) {
    std::string dir = instance_dir + "/per_cpu/cpu" + std::to_string(cpu);
    CpuPages c;
    c.cpu = cpu;
    auto stats_text = ReadFileToString(dir + "/stats");
    if (!stats_text.ok()) return MakeError("failed to read {}/stats: {}", dir, stats_text.error().message);
    GN_ASSIGN_OR_RETURN(c.stats_before, ParseCpuBufferStats(*stats_text));
    std::string raw = dir + "/trace_pipe_raw";
    UniqueFd fd(::open(raw.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) return MakeError("failed to open {}: {}", raw, std::strerror(errno));
    // The kernel hands out one whole sub-buffer per read of that size
    // (tracing_buffers_read); a read of an empty buffer fails with EAGAIN.
    std::vector<uint8_t> page(layout.page_size());
    while (max_pages == 0 || c.pages.size() < max_pages) {
      ssize_t n = ::read(fd.get(), page.data(), page.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) break;
      if (n < 0) return MakeError("failed to read {}: {}", raw, std::strerror(errno));
      if (n == 0) break;
      c.pages.emplace_back(page.begin(), page.begin() + n);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace gpunoise::blackbox
