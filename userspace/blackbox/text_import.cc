#include "blackbox/text_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "blackbox/generic_bundles.h"
#include "blackbox/text_dump.h"
#include "collect/host_info.h"
#include "common/files.h"
#include "export/perfetto/kernel_log_packets.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/trace_sink.h"

namespace gpunoise::blackbox {
namespace {

constexpr size_t kBatch = 8192;  // events per bundle

}  // namespace

Result<TextImportResult> ImportTextDump(const TextImportOptions& options) {
  GN_ASSIGN_OR_RETURN(std::string text, ReadFileToString(options.input));
  auto parsed = ParseTextDump(text);
  if (!parsed.ok()) return MakeError("{}: {}", options.input, parsed.error().message);
  TextDump& d = *parsed;
  TextImportResult result;
  result.console_dump = d.console_dump;
  result.lines = d.lines;
  result.other_lines = d.other_lines;
  result.first_ts = d.first_ts;
  result.last_ts = d.last_ts;

  GN_ASSIGN_OR_RETURN(auto sink, perfetto::TraceSink::Create(options.output));
  model::HostInfo host = collect::ReadHostInfo();
  // The boot that wrote the ring: its markers say, when arm wrote them.
  if (!d.markers.headers.empty() && !d.markers.headers.back().boot_id.empty())
    host.boot_id = d.markers.headers.back().boot_id;
  model::SessionInfo session;
  session.tool_version = options.tool_version;
  session.hostname = host.hostname;
  session.boot_id = host.boot_id;
  session.machine_name = host.machine_name;
  session.command_line = options.command_line;
  session.end_reason = d.console_dump ? "ftrace_dump_on_oops text: " + options.input : "ftrace text: " + options.input;
  std::sort(d.markers.anchors.begin(), d.markers.anchors.end(),
            [](const MarkerAnchor& a, const MarkerAnchor& b) { return a.record_ts < b.record_ts; });
  int64_t realtime_minus_boottime = 0;
  if (!d.markers.anchors.empty()) {
    const MarkerAnchor& a = d.markers.anchors.back();
    perfetto::ClockReadings clocks;
    clocks.boottime = a.boottime_ns;
    clocks.monotonic = a.monotonic_ns;
    clocks.realtime = a.realtime_ns;
    sink->set_clock_readings(clocks);
    realtime_minus_boottime = static_cast<int64_t>(a.realtime_ns) - static_cast<int64_t>(a.boottime_ns);
    result.anchored = true;
  } else {
    // No anchor: the text's clock is taken as this boot's BOOTTIME (true
    // for a `trace` file of this boot; a crashed boot's dump keeps its own).
    perfetto::ClockReadings now = perfetto::ReadClocks();
    realtime_minus_boottime = static_cast<int64_t>(now.realtime) - static_cast<int64_t>(now.boottime);
  }
  model::CollectorReport collector;
  collector.name = "blackbox";
  collector.state = model::CollectorState::kActive;
  collector.attached_events.push_back(d.console_dump ? "ftrace_dump_on_oops text" : "ftrace text");
  model::ProcessSnapshot no_processes;
  GN_RETURN_IF_ERROR(sink->WriteHeader(host, no_processes, session));

  // The IRQ names before the events: the trace names irq slices by them.
  model::IrqTable irqs;
  for (const auto& [irq, name] : d.irq_names) irqs[irq].name = name;
  sink->set_irq_table(irqs);
  std::set<uint32_t> cpus;
  for (const auto& [cpu, n] : d.records) cpus.insert(cpu);
  for (const auto& [cpu, n] : d.lost) cpus.insert(cpu);
  std::string packet;
  for (uint32_t cpu : cpus) {
    std::vector<model::Event>& events = d.events[cpu];
    // A CPU's lines are in time order; [LOST] lines mark where the ring
    // overwrote records, so the bundle after one says so.
    std::vector<size_t> cuts = d.loss_at[cpu];
    size_t at = 0;
    auto lost_at = [&](size_t i) { return std::find(cuts.begin(), cuts.end(), i) != cuts.end(); };
    while (at < events.size()) {
      size_t end = std::min(events.size(), at + kBatch);
      for (size_t c : cuts)
        if (c > at && c < end) end = c;
      std::stable_sort(events.begin() + static_cast<ptrdiff_t>(at), events.begin() + static_cast<ptrdiff_t>(end),
                       [](const model::Event& a, const model::Event& b) { return a.ts < b.ts; });
      GN_RETURN_IF_ERROR(sink->WriteCpuBatch(
          cpu, std::span<const model::Event>(events.data() + at, end - at), lost_at(at)));
      at = end;
    }
    result.events += events.size();
    model::CpuLoss loss;
    loss.cpu = cpu;
    loss.events = d.records[cpu];
    loss.lost = d.lost[cpu];
    if (loss.lost) loss.lost_by_kind["unknown (ring buffer overwritten)"] = loss.lost;
    session.cpus.push_back(loss);
    collector.events += loss.events;
    collector.lost += loss.lost;
    result.lost += loss.lost;
    result.records_per_cpu[cpu] = loss.events;
    if (loss.lost) result.lost_per_cpu[cpu] = loss.lost;
  }
  session.start_ts = d.first_ts;
  session.end_ts = d.last_ts;
  session.collectors.push_back(collector);

  // Generic records, per CPU, in bundles of their own.
  std::map<uint32_t, std::vector<const GenericRecord*>> by_cpu;
  for (const GenericRecord& g : d.generic) by_cpu[g.cpu].push_back(&g);
  for (const auto& [cpu, list] : by_cpu) {
    GN_RETURN_IF_ERROR(WriteGenericBundles(
        cpu, list, [&](std::string_view bundle) { return sink->writer().WriteSerializedPacket(bundle); }));
    result.generic += list.size();
  }
  if (!d.log.empty()) {
    packet.clear();
    perfetto::EncodeKernelLogPacket(d.log, realtime_minus_boottime, 0, perfetto::kKernelLogSequenceId, &packet);
    GN_RETURN_IF_ERROR(sink->writer().WriteSerializedPacket(packet));
  }
  result.log_records = d.log.size();
  GN_RETURN_IF_ERROR(sink->WriteFooter(no_processes, session));
  GN_RETURN_IF_ERROR(sink->Commit());
  result.output = options.output;
  return result;
}

std::string FormatTextImportSummary(const TextImportResult& r) {
  std::string out = fmt::format(
      "black box ({}): {} event lines ({} as scheduler/irq/net events, {} generic, {} kernel log lines), {} lost "
      "before the end{}\n",
      r.console_dump ? "ftrace_dump_on_oops text" : "ftrace text", r.lines, r.events, r.generic, r.log_records,
      r.lost, r.other_lines ? fmt::format(", {} other console lines between them left out", r.other_lines) : "");
  for (const auto& [cpu, n] : r.records_per_cpu) {
    auto lost = r.lost_per_cpu.find(cpu);
    out += fmt::format("  cpu {}: {} records{}\n", cpu, n,
                       lost == r.lost_per_cpu.end() ? "" : fmt::format(", {} lost", lost->second));
  }
  if (r.last_ts > r.first_ts)
    out += fmt::format("  the last {:.3f} s, microsecond times (the text's precision)\n",
                       static_cast<double>(r.last_ts - r.first_ts) / 1e9);
  out += r.anchored ? "  placed on REALTIME by the last gpunoise-blackbox anchor marker\n"
                    : "  no gpunoise-blackbox anchor marker: times are the trace clock's, placed as this boot's\n";
  out += fmt::format("  wrote {}\n", r.output);
  return out;
}

}  // namespace gpunoise::blackbox
