#include "record/finish.h"

#include <algorithm>

#include "collect/rdma_counters.h"
#include "common/log.h"
#include "common/strings.h"
#include "export/perfetto/trace_sink.h"
#include "model/pid_ns_map.h"
#include "record/background_detach.h"
#include "record/kernel_log_recording.h"

namespace gpunoise::record {

void FinishTrace(const RecordOptions& options, CollectorSet& set, perfetto::TraceSink& sink,
                 const std::vector<model::RdmaPort>& rdma_start, RecordResult& result) {
  model::SessionInfo& session = result.session;
  if (!rdma_start.empty()) {
    Status st = sink.WriteRdmaPorts(session.end_ts, model::RdmaDelta(rdma_start, collect::ReadRdmaCounters()));
    if (!st.ok() && !result.late_error) result.late_error = st.error();
  }
  if (set.net) {
    // The network totals are written even after a disk-full error, like the
    // footer: they are small and say what the recording saw.
    Status st = set.net->Finish(sink);
    if (!st.ok() && !result.late_error) result.late_error = st.error();
    result.net_summary = set.net->Summary();
  }
  if (set.node) {
    Status st = set.node->Finish(sink);
    if (!st.ok() && !result.late_error) result.late_error = st.error();
    result.node_summary = set.node->Summary();
    set.node->FillReport(session.collectors);
  }
  if (options.console) {
    // Detached: the console log is complete.
    if (Status st = options.console->Drain(sink.writer()); !st.ok() && !result.late_error) result.late_error = st.error();
    options.console->FillReport(session.collectors);
  }
  for (const auto& cpu : session.cpus) result.parse_errors += cpu.decode_errors;
  if (result.parse_errors) log::Warning("{} malformed records were skipped (counted as lost)", result.parse_errors);
  if (session.records_outside_cpus)
    log::Warning("{} records came from CPUs outside the recording (counted as lost)", session.records_outside_cpus);

  model::ProcessSnapshot end_processes = ScanProcessSnapshot(options);
  // Tasks born between the first scan and the attach, and still alive.
  if (options.pid_ns_map) options.pid_ns_map->AddSnapshot(end_processes);
  Status footer = sink.WriteFooter(end_processes, session);
  if (!footer.ok() && !result.late_error) result.late_error = footer.error();
  if (options.append_extra) {
    Status extra = options.append_extra(sink.writer(), session);
    if (!extra.ok() && !result.late_error) result.late_error = extra.error();
  }
  if (set.net && options.kernel_log) {
    auto joined = set.net->AttachKernelLog(sink, *options.kernel_log);
    if (!joined.ok() && !result.late_error) result.late_error = joined.error();
    else if (joined.ok() && *joined) log::Info("kernel log: {} lines attached to link events", *joined);
  }
  Status committed = sink.Commit();
  if (!committed.ok() && !result.late_error) result.late_error = committed.error();
  result.path = sink.path();
  result.bytes_written = sink.bytes_written();
  result.packet_bytes = sink.packet_bytes();
  result.compression = options.compression;
  result.blocks_sealed = sink.writer().blocks_sealed();
  result.blocks_plain = sink.writer().blocks_plain();
  if (result.detach_abandoned) LeaveToDetacher(set.collectors);
}

std::string FormatSummary(const RecordResult& r) {
  const auto& s = r.session;
  std::string per_collector;
  uint64_t lost = 0;
  for (const auto& c : s.collectors) {
    if (!per_collector.empty()) per_collector += ", ";
    if (c.state == model::CollectorState::kDisabled)
      per_collector += fmt::format("{} disabled", c.name);
    else
      per_collector += fmt::format("{} {} events", c.name, c.events);
  }
  uint64_t unseen = 0;
  for (const auto& cpu : s.cpus) unseen += cpu.unseen_switches;
  lost = model::TotalKernelAndUserLoss(s);
  double seconds = s.end_ts > s.start_ts ? static_cast<double>(s.end_ts - s.start_ts) / 1e9 : 0;
  // Kept apart because no ring size or drain rate can win them back: the
  // kernel skipped a program that was already running on that CPU.
  std::string skipped_text =
      s.bpf_recursion_misses
          ? fmt::format(" ({} of them program runs the kernel skipped)", s.bpf_recursion_misses)
          : "";
  std::string unseen_text =
      unseen ? fmt::format(", {} context switches the kernel did not report", unseen) : "";
  uint64_t unreported = 0;
  for (const auto& cpu : s.cpus)
    for (uint64_t n : cpu.unreported_softirqs) unreported += n;
  if (unreported)
    unseen_text += fmt::format(", {} the kernel ran without reporting (its own counts say so)",
                               unreported == 1 ? std::string("1 softirq") : fmt::format("{} softirqs", unreported));
  // A ring that lost records: did the recorder fall behind, and when?
  uint64_t ring_lost = 0;
  for (const auto& cpu : s.cpus) ring_lost += cpu.lost;
  if (ring_lost && s.first_ring_loss_seen) {
    auto offset = [&](uint64_t ts) { return static_cast<double>(ts - std::min(ts, s.start_ts)) / 1e9; };
    skipped_text += fmt::format(" ({} with the ring full, first found at +{:.3f} s; before a drain that found loss "
                                "the rings had gone up to {:.1f} ms unread, from +{:.3f} s)",
                                ring_lost, offset(s.first_ring_loss_seen), static_cast<double>(s.unread_before_loss_ns) / 1e6,
                                offset(s.unread_before_loss_from));
  }
  // The drain's own priority (record/drain_priority.h): how often the
  // node's work left it too little CPU.
  std::string drain_text;
  if (s.drain_yielded) {
    auto offset = [&](uint64_t ts) { return static_cast<double>(ts - std::min(ts, s.start_ts)) / 1e9; };
    std::string from = s.drain_idle_from ? fmt::format("from +{:.1f} s", offset(s.drain_idle_from))
                                         : "never: they had none";
    drain_text = fmt::format("\ndrain: SCHED_IDLE while its buffers had room ({}); back to SCHED_OTHER {} times ({} for "
                             "a late turn, {} for a doorbell), {:.1f} s in all",
                             from, s.drain_raises, s.drain_raised_for_late, s.drain_raised_for_doorbell,
                             static_cast<double>(s.drain_raised_ns) / 1e9);
  }
  if (s.netrx_untimed)
    drain_text += fmt::format("\nNET_RX storms: {} softirqs ran untimed, counted (1 in {} timed past 8 a tick on a "
                              "CPU; --netrx-sample 0 times all)",
                              s.netrx_untimed, s.netrx_sample_every);
  std::string net_text = drain_text + (r.net_summary.empty() ? "" : "\n" + r.net_summary);
  if (!r.node_summary.empty()) net_text += "\n" + r.node_summary;
  std::string size_text = HumanBytes(r.bytes_written);
  if (r.compression != perfetto::TraceCompression::kNone)
    size_text += fmt::format("; {} before {}", HumanBytes(r.packet_bytes),
                             perfetto::TraceCompressionName(r.compression));
  if (r.blocks_plain)
    size_text += fmt::format("; {} of {} blocks written uncompressed, the node had no CPU to spare",
                             r.blocks_plain, r.blocks_sealed);
  return fmt::format("gpunoise: recorded {:.1f} s on {} CPUs to {} ({}): {}; {} lost events{}{}{}",
                     seconds, s.cpus.size(), r.path, size_text, per_collector, lost, skipped_text, unseen_text,
                     net_text);
}

}  // namespace gpunoise::record
