// Reads a tracefs instance's ring buffer: every CPU's raw pages through
// per_cpu/cpuN/trace_pipe_raw (a consuming read: what is read is gone from
// the buffer, so the pages are kept in memory and decoded from there), and
// the buffer's own per-CPU accounting in per_cpu/cpuN/stats.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blackbox/ring_page.h"
#include "common/result.h"

namespace gpunoise::blackbox {

// per_cpu/cpuN/stats (kernel/trace/trace.c tracing_stats_read).
struct CpuBufferStats {
  uint64_t entries = 0;         // records in the buffer, not yet read
  uint64_t overrun = 0;         // records overwritten before being read
  uint64_t commit_overrun = 0;  // records lost because a writer wrapped a page it was filling
  uint64_t bytes = 0;
  uint64_t dropped_events = 0;  // records refused (non-overwrite mode, buffer full)
  uint64_t read_events = 0;
};
Result<CpuBufferStats> ParseCpuBufferStats(std::string_view text);

struct CpuPages {
  uint32_t cpu = 0;
  std::vector<std::vector<uint8_t>> pages;
  CpuBufferStats stats_before;  // read before the pages
};

// The CPUs the instance has buffers for (per_cpu/cpuN).
Result<std::vector<uint32_t>> InstanceCpus(const std::string& instance_dir);

// Drains every CPU's trace_pipe_raw (non-blocking, until empty). At most
// `max_pages` per CPU (0: no limit) so a buffer that is still being written
// cannot keep the reader going for ever.
Result<std::vector<CpuPages>> ReadInstancePages(const std::string& instance_dir,
                                                const PageLayout& layout, size_t max_pages = 0);

}  // namespace gpunoise::blackbox
