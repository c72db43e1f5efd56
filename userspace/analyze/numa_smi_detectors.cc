// numa_balancing: automatic NUMA balancing moved focus threads to another
// node (sched_move_numa, sched_swap_numa) or migrated their pages
// (mm_migrate_pages, reason NUMA_MISPLACED, in the faulting thread's
// context). Neither costs time the trace can measure (the cost is cold
// caches and remote memory afterwards), so the finding counts and costs 0.
// smi: MSR_SMI_COUNT rose during the recording: the firmware took every
// CPU away from the OS, invisibly to the kernel's own tracing.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyze/cpu_state_detectors.h"
#include "analyze/format_util.h"

namespace gpunoise::analyze {

std::vector<Finding> DetectNumaBalancing(const AnalysisContext& ctx, const CpuStateData& d) {
  std::vector<Finding> out;
  if (ctx.focus.empty() || d.numa.empty()) return out;
  const double min_moves = ctx.th().Get("numa.min_moves");
  const double min_pages = ctx.th().Get("numa.min_pages");
  uint64_t moves = 0, swaps = 0, pages = 0, failed = 0, first = UINT64_MAX, last = 0;
  std::map<int32_t, uint64_t> moves_of, pages_of;
  std::set<uint32_t> cpus;
  std::vector<std::string> lines;
  for (const model::NumaEvent& n : d.numa) {
    if (n.ts < ctx.from || n.ts >= ctx.to) continue;
    if (n.kind == model::NumaEventKind::kMigrate) {
      if (n.reason != model::kMigrateReasonNumaMisplaced || !ctx.focus.count(n.tid)) continue;
      pages += n.succeeded;
      failed += n.failed;
      pages_of[n.tid] += n.succeeded;
    } else {
      int32_t tid = ctx.focus.count(n.tid) ? n.tid : n.kind == model::NumaEventKind::kSwap && ctx.focus.count(n.other_tid) ? n.other_tid : 0;
      if (!tid) continue;
      (n.kind == model::NumaEventKind::kMove ? moves : swaps)++;
      moves_of[tid]++;
      if (n.src_cpu >= 0) cpus.insert(static_cast<uint32_t>(n.src_cpu));
      if (n.dst_cpu >= 0) cpus.insert(static_cast<uint32_t>(n.dst_cpu));
      if (lines.size() < 5)
        lines.push_back(fmt::format("{} {}: CPU {} (node {}) -> CPU {} (node {}){}", FormatOffset(n.ts, ctx.t().start_ts),
                                    ctx.t().DescribeThread(tid), n.src_cpu, n.src_nid, n.dst_cpu, n.dst_nid,
                                    n.kind == model::NumaEventKind::kSwap
                                        ? fmt::format(", swapped with {}", ctx.t().DescribeThread(tid == n.tid ? n.other_tid : n.tid))
                                        : ""));
    }
    first = std::min(first, n.ts);
    last = std::max(last, n.ts);
  }
  const uint64_t moved = moves + swaps;
  if (static_cast<double>(moved) < min_moves && static_cast<double>(pages) < min_pages) return out;
  if (!moved && !pages) return out;
  Finding f;
  f.detector = "numa_balancing";
  f.kind = "numa_balancing";
  f.culprit = "automatic NUMA balancing (kernel.numa_balancing)";
  f.culprit_kind = "kernel";
  f.cpus.assign(cpus.begin(), cpus.end());
  std::set<int32_t> tids;
  for (const auto& [tid, _] : moves_of) tids.insert(tid);
  for (const auto& [tid, _] : pages_of) tids.insert(tid);
  f.focus_tids.assign(tids.begin(), tids.end());
  f.start = first;
  f.end = last;
  f.title = fmt::format("automatic NUMA balancing moved focus threads {} times to another node ({} moves, {} swaps) "
                        "and migrated {} of their pages",
                        moved, moves, swaps, pages);
  f.metrics = {{"moves", static_cast<double>(moves)},
               {"swaps", static_cast<double>(swaps)},
               {"pages_migrated", static_cast<double>(pages)},
               {"pages_failed", static_cast<double>(failed)}};
  for (const auto& line : lines) f.evidence.push_back(line);
  for (int32_t tid : tids)
    f.evidence.push_back(fmt::format("{}: {} moves, {} pages migrated (NUMA_MISPLACED)", ctx.t().DescribeThread(tid),
                                     moves_of[tid], pages_of[tid]));
  f.evidence.push_back("no time cost is measured: the cost is cold caches and remote memory afterwards; "
                       "pin the threads and their memory (numactl) or set kernel.numa_balancing=0");
  out.push_back(std::move(f));
  return out;
}

std::vector<Finding> DetectSmis(const AnalysisContext& ctx, const CpuStateData& d) {
  std::vector<Finding> out;
  if (d.smi.empty()) return out;
  const double min_count = ctx.th().Get("smi.min_count");
  uint64_t total = 0, most = 0;
  Finding f;
  for (const auto& [cpu, se] : d.smi) {
    // The count is 32 bits wide (Intel SDM, MSR_SMI_COUNT): it may wrap.
    uint64_t n = (se.second - se.first) & 0xffffffffull;
    if (!n) continue;
    f.cpus.push_back(cpu);
    most = std::max(most, n);
    f.evidence.push_back(fmt::format("CPU {}: MSR_SMI_COUNT {} -> {} (+{})", cpu, se.first, se.second, n));
  }
  for (const auto& [cpu, se] : d.smi) total += (se.second - se.first) & 0xffffffffull;
  if (!most || static_cast<double>(most) < min_count) return out;
  f.detector = "smi";
  f.kind = "smi";
  f.culprit = "system management mode (firmware SMIs)";
  f.culprit_kind = "firmware";
  f.focus_tids.assign(ctx.focus.begin(), ctx.focus.end());
  f.start = ctx.t().start_ts;
  f.end = ctx.t().end_ts;
  f.title = fmt::format("the firmware took the CPUs into system management mode {} times during the recording "
                        "(SMIs stop every CPU, unseen by the kernel's tracing)",
                        most);
  f.metrics = {{"smis", static_cast<double>(most)}, {"smis_all_cpus", static_cast<double>(total)}};
  f.evidence.push_back("counted at the recording's start and end, not within --window; the time each took is not "
                       "measured (typically tens to hundreds of microseconds)");
  out.push_back(std::move(f));
  return out;
}

}  // namespace gpunoise::analyze
