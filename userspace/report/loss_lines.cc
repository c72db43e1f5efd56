#include "report/loss_lines.h"

#include <fmt/format.h>

#include "analyze/format_util.h"

namespace gpunoise::report_export {
namespace {

std::string Plural(uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

void Join(std::string* out, const std::string& part, std::string_view sep = ", ") {
  if (!out->empty()) *out += sep;
  *out += part;
}

std::string KernelRingLine(const analyze::LossSummary& l) {
  std::string cpus;
  for (const auto& c : l.cpus) {
    if (!c.lost) continue;
    std::string causes;
    // gpunoise: the ring refused the record (reserve failed), per kind.
    for (const auto& [kind, n] : c.lost_by_kind)
      if (n) Join(&causes, fmt::format("{} {}", kind, n));
    // Perfetto's recorder: the kernel's three counters.
    if (c.overwritten) Join(&causes, fmt::format("{} overwritten", c.overwritten));
    if (c.dropped) Join(&causes, fmt::format("{} dropped with the ring full", c.dropped));
    if (c.commit_overrun) Join(&causes, fmt::format("{} commit overrun", c.commit_overrun));
    Join(&cpus, fmt::format("CPU {} {}{}", c.cpu, c.lost, causes.empty() ? "" : " (" + causes + ")"));
  }
  return fmt::format("kernel ring full: {}: {}", l.kernel_ring_full, cpus);
}

// Whether the recorder itself fell behind: a ring left unread long enough
// fills at any size (docs/record.md, "When the rings lose records").
std::string RecorderPaceLine(const analyze::LossSummary& l) {
  auto offset = [&](uint64_t ts) { return analyze::FormatOffset(ts, l.recording_start); };
  return fmt::format("a drain first found a ring short at {}; before such a drain the rings had gone up to {:.1f} ms "
                     "unread (from {})",
                     offset(l.first_ring_loss_seen), static_cast<double>(l.unread_before_loss_ns) / 1e6,
                     offset(l.unread_before_loss_from));
}

std::string ServiceLine(const model::TraceServiceStats& s) {
  std::string parts;
  for (const auto& b : s.buffers) {
    std::string buf;
    if (b.patches_failed)
      Join(&buf, Plural(b.patches_failed, "patch failed", "patches failed") +
                     " (packets whose chunk was gone before their size was patched in: lost or cut)");
    if (b.chunks_overwritten || b.bytes_overwritten)
      Join(&buf, fmt::format("{} overwritten before read ({} bytes)",
                             Plural(b.chunks_overwritten, "chunk", "chunks"), b.bytes_overwritten));
    if (b.chunks_discarded)
      Join(&buf, Plural(b.chunks_discarded, "chunk", "chunks") + " discarded with the buffer full");
    if (b.trace_writer_packet_loss)
      Join(&buf, fmt::format("{} reported by writers", Plural(b.trace_writer_packet_loss, "packet loss", "packet losses")));
    if (b.abi_violations)
      Join(&buf, Plural(b.abi_violations, "shared-memory ABI violation", "shared-memory ABI violations") +
                     " (a producer bug)");
    if (!buf.empty()) Join(&parts, fmt::format("buffer {}: {}", b.index, buf), "; ");
  }
  std::string service;
  if (s.chunks_discarded)
    Join(&service, Plural(s.chunks_discarded, "chunk", "chunks") + " discarded before any buffer");
  if (s.patches_discarded)
    Join(&service, Plural(s.patches_discarded, "patch", "patches") + " discarded before any buffer");
  if (s.invalid_packets) Join(&service, Plural(s.invalid_packets, "invalid packet", "invalid packets"));
  if (s.flushes_failed)
    Join(&service, fmt::format("{} of {} failed (their data may be missing)",
                               Plural(s.flushes_failed, "flush", "flushes"), s.flushes_requested));
  if (s.final_flush_failed) Join(&service, "the final flush failed (the end of the trace may be missing)");
  if (s.filter_errors) Join(&service, Plural(s.filter_errors, "trace filter error", "trace filter errors"));
  if (!service.empty()) Join(&parts, service, "; ");
  if (parts.empty()) return {};
  return "the tracing service (traced) lost data: " + parts;
}

std::string FtraceSetupLine(const model::FtraceStatsSummary& f) {
  std::string parts;
  auto list = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) Join(&out, n);
    return out;
  };
  if (!f.failed_events.empty())
    Join(&parts, fmt::format("{} could not be enabled: {}",
                             Plural(f.failed_events.size(), "event", "events"), list(f.failed_events)), "; ");
  if (!f.unknown_events.empty())
    Join(&parts, fmt::format("{} not on this kernel: {}",
                             Plural(f.unknown_events.size(), "event", "events"), list(f.unknown_events)), "; ");
  if (!f.atrace_errors.empty()) Join(&parts, "atrace: " + f.atrace_errors, "; ");
  if (!f.exclusive_feature_error.empty()) Join(&parts, f.exclusive_feature_error, "; ");
  if (parts.empty()) return {};
  return "ftrace setup (never recorded, not lost): " + parts;
}

}  // namespace

std::string_view FtraceParseStatusName(uint32_t code) {
  static constexpr std::string_view kNames[] = {
      "FTRACE_STATUS_UNSPECIFIED",
      "FTRACE_STATUS_OK",
      "FTRACE_STATUS_UNEXPECTED_READ_ERROR",
      "FTRACE_STATUS_PARTIAL_PAGE_READ",
      "FTRACE_STATUS_ABI_INVALID_PAGE_HEADER",
      "FTRACE_STATUS_ABI_SHORT_EVENT_HEADER",
      "FTRACE_STATUS_ABI_NULL_PADDING",
      "FTRACE_STATUS_ABI_SHORT_PADDING_LENGTH",
      "FTRACE_STATUS_ABI_INVALID_PADDING_LENGTH",
      "FTRACE_STATUS_ABI_SHORT_TIME_EXTEND",
      "FTRACE_STATUS_ABI_SHORT_TIME_STAMP",
      "FTRACE_STATUS_ABI_SHORT_DATA_LENGTH",
      "FTRACE_STATUS_ABI_ZERO_DATA_LENGTH",
      "FTRACE_STATUS_ABI_INVALID_DATA_LENGTH",
      "FTRACE_STATUS_ABI_SHORT_EVENT_ID",
      "FTRACE_STATUS_ABI_END_OVERFLOW",
      "FTRACE_STATUS_SHORT_COMPACT_EVENT",
      "FTRACE_STATUS_INVALID_EVENT",
  };
  return code < std::size(kNames) ? kNames[code] : "FTRACE_STATUS_(unknown)";
}

std::string GpuLossLine(const model::GpuLoss& g) {
  std::string out = fmt::format("GPU: {}, {}", Plural(g.processes, "process", "processes"),
                                Plural(g.fragments, "fragment", "fragments"));
  std::string lost;
  if (g.cupti_dropped_records)
    Join(&lost, Plural(g.cupti_dropped_records, "CUPTI record", "CUPTI records") +
                    " dropped (CUPTI had no buffer space)");
  if (g.chunks_not_written)
    Join(&lost, Plural(g.chunks_not_written, "chunk", "chunks") +
                    " of GPU data not written (the library's directory was not writable in time)");
  if (g.fragments_unreadable)
    Join(&lost, Plural(g.fragments_unreadable, "fragment", "fragments") + " unreadable (none of it in the trace)");
  if (g.fragments_truncated)
    Join(&lost, Plural(g.fragments_truncated, "fragment", "fragments") + " truncated (kept up to the damage)");
  if (g.fragments_late)
    Join(&lost, Plural(g.fragments_late, "fragment", "fragments") + " after the recording's end (not in the trace)");
  if (g.threads_unmapped || g.processes_unmapped)
    Join(&lost, fmt::format("{} and {} in pid namespaces with no host task known (their GPU data is on "
                            "tracks attached to no host thread)",
                            Plural(g.processes_unmapped, "process", "processes"),
                            Plural(g.threads_unmapped, "thread", "threads")));
  if (g.processes_not_captured)
    Join(&lost, Plural(g.processes_not_captured, "process", "processes") +
                    " not captured (another CUPTI client, such as torch.profiler or Nsight, held CUPTI)");
  if (!g.error.empty()) Join(&lost, "fragments not collected: " + g.error);
  out += lost.empty() ? "; nothing lost" : "; lost: " + lost;
  if (g.processes_translated)
    out += fmt::format("; {} in containers mapped to host pids",
                       Plural(g.processes_translated, "process", "processes"));
  return out;
}

std::vector<std::string> LossLines(const analyze::LossSummary& l) {
  std::vector<std::string> lines;
  uint64_t spans = 0;
  for (const auto& c : l.cpus) spans += c.loss_spans;
  std::string total = fmt::format("lost events: {}", l.total_lost);
  if (spans) total += fmt::format(", {} marked in the data", Plural(spans, "gap", "gaps"));
  total += fmt::format(" (source: {})", l.source);
  lines.push_back(total);

  // Each stage once, with its cause; they add up to the total.
  if (l.kernel_ring_full) lines.push_back("  " + KernelRingLine(l));
  if (l.kernel_ring_full && l.first_ring_loss_seen) lines.push_back("    " + RecorderPaceLine(l));
  if (l.bpf_recursion_misses) {
    std::string programs;
    for (const auto& p : l.programs)
      if (p.missed) Join(&programs, fmt::format("{}/{} {}", p.collector, p.program, p.missed));
    lines.push_back(fmt::format("  eBPF program runs the kernel skipped (another program ran on the CPU): {}{}",
                                l.bpf_recursion_misses, programs.empty() ? "" : ": " + programs));
  }
  if (l.kprobe_misses) lines.push_back(fmt::format("  kretprobe misses (maxactive too small): {}", l.kprobe_misses));
  uint64_t user = l.decode_errors + l.unwritten + l.records_outside_cpus;
  if (user) {
    std::string causes;
    if (l.decode_errors) Join(&causes, fmt::format("{} failed to decode", l.decode_errors));
    if (l.unwritten) Join(&causes, fmt::format("{} read but not written (the trace file had failed)", l.unwritten));
    if (l.records_outside_cpus)
      Join(&causes, fmt::format("{} from CPUs outside the recording's CPU set", l.records_outside_cpus));
    lines.push_back(fmt::format("  user space: {}: {}", user, causes));
  }

  // Outside the total: what a per-CPU log or a pairing left out of its own
  // events, and what the reader must know before trusting counts.
  std::string maps, logs, unpaired;
  for (const auto& m : l.map_losses) {
    if (!m.count) continue;
    std::string item = fmt::format("{}/{} {}", m.collector, m.map, m.count);
    switch (m.kind) {
      case model::MapLossKind::kFull: Join(&maps, item); break;
      case model::MapLossKind::kOverwritten: Join(&logs, item); break;
      case model::MapLossKind::kUnpaired: Join(&unpaired, item); break;
    }
  }
  if (!logs.empty())
    lines.push_back("in-kernel logs overwritten before they were read (those records are lost, outside the count "
                    "above): " + logs);
  if (!unpaired.empty())
    lines.push_back("callbacks left out (their begin was seen without their end, or their end without their "
                    "begin): " + unpaired);
  if (!maps.empty())
    lines.push_back("aggregates undercount (a full in-kernel map refused updates; no event lost): " + maps);
  if (!l.switch_chain_checked) {
    lines.push_back("switch chain not checked: task filter on");
  } else if (l.total_unseen_switches) {
    lines.push_back(l.unseen_from_session
                        ? fmt::format("{} context switches the kernel never delivered", l.total_unseen_switches)
                        : fmt::format("{} context switches missing from the data (breaks in the switch chain)",
                                      l.total_unseen_switches));
  }
  if (l.softirqs_audited && l.total_unreported_softirqs) {
    std::string by_vector;
    for (uint32_t vec = 0; vec < model::kNumSoftirqVecs; ++vec)
      if (l.unreported_softirqs[vec])
        Join(&by_vector, fmt::format("{} {}", model::SoftirqName(vec), l.unreported_softirqs[vec]));
    lines.push_back(fmt::format("{} the kernel counted but never delivered to its tracepoint ({}; the kernel's "
                                "/proc/softirqs against the entry program's runs): not in the trace, not lost by "
                                "gpunoise",
                                Plural(l.total_unreported_softirqs, "softirq", "softirqs"), by_vector));
  }
  if (l.netrx_untimed) {
    std::string line = fmt::format("NET_RX storms sampled: {} ran untimed, counted exactly (not lost)",
                                   Plural(l.netrx_untimed, "softirq", "softirqs"));
    if (l.netrx_sample_every)
      line += fmt::format("; the recorder timed 1 in {} past 8 a tick on a CPU (record --netrx-sample)",
                          l.netrx_sample_every);
    line += fmt::format("; {} placed between the timed ones as estimates, as long as those",
                        l.netrx_untimed_placed);
    if (l.netrx_untimed_placed < l.netrx_untimed)
      line += fmt::format(" ({} did not fit and count without time)", l.netrx_untimed - l.netrx_untimed_placed);
    lines.push_back(line);
  }
  if (l.slices_trimmed)
    lines.push_back(fmt::format("{} CPU slices overlapped earlier ones (events out of order: a damaged trace) and "
                                "were cut where they overlapped",
                                l.slices_trimmed));
  if (const auto& k = l.kernel_log; k.messages || k.kmsg_gaps || k.console_overwritten) {
    std::string line = fmt::format("kernel log: {}", Plural(k.messages, "message", "messages"));
    if (k.console) line += fmt::format(", {} with the printk's CPU and task", k.with_caller);
    else line += " (no printk:console collector: times from /dev/kmsg, no CPU or task)";
    std::string lost;
    if (k.kmsg_gaps) Join(&lost, fmt::format("{} overwritten in /dev/kmsg's ring before they were read (sequence gaps)", k.kmsg_gaps));
    if (k.console_overwritten) Join(&lost, fmt::format("{} overwritten in the console collector's log", k.console_overwritten));
    line += lost.empty() ? "; none lost" : "; lost: " + lost;
    if (k.console && (k.kmsg_only || k.console_only))
      line += fmt::format("; unmatched: {} only in /dev/kmsg (estimated time, no caller), {} only from printk:console "
                          "(no level or DEVICE=)",
                          k.kmsg_only, k.console_only);
    lines.push_back(line);
  }
  if (l.service) {
    std::string s = ServiceLine(*l.service);
    if (!s.empty()) lines.push_back(s);
  }
  if (l.packet_loss.packets)
    lines.push_back(fmt::format("packets lost before {} on {} (previous_packet_dropped: their writer lost packets)",
                                Plural(l.packet_loss.packets, "packet", "packets"),
                                Plural(l.packet_loss.sequences, "sequence", "sequences")));
  if (l.ftrace) {
    std::string setup = FtraceSetupLine(*l.ftrace);
    if (!setup.empty()) lines.push_back(setup);
    if (!l.ftrace->parse_errors.empty()) {
      std::string codes;
      for (uint32_t c : l.ftrace->parse_errors) Join(&codes, std::string(FtraceParseStatusName(c)));
      lines.push_back("ftrace parse errors while recording (a bug in Perfetto or the kernel): " + codes);
    }
    if (l.ftrace->preserve_ftrace_buffer)
      lines.push_back("preserve_ftrace_buffer: events from before the trace's start were kept");
  }
  if (l.gpu) lines.push_back(GpuLossLine(*l.gpu));
  if (!l.end_reason.empty()) lines.push_back("recording ended: " + l.end_reason);
  return lines;
}

}  // namespace gpunoise::report_export
