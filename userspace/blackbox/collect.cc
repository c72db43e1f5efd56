#include "blackbox/collect.h"

#include <sys/utsname.h>

#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "blackbox/event_set.h"
#include "blackbox/generic_bundles.h"
#include "blackbox/saved_table.h"
#include "collect/host_info.h"
#include "collect/kallsyms.h"
#include "common/files.h"
#include "common/strings.h"
#include "export/perfetto/kernel_log_packets.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/trace_sink.h"

namespace gpunoise::blackbox {
namespace {

// Field names that hold a kernel code address in the tracepoints of the
// event set (workqueue's function, kfree_skb's location, print's ip).
bool IsCodeAddressField(std::string_view name) {
  return name == "function" || name == "location" || name == "ip" || name == "call_site" ||
         name == "func";
}

std::optional<uint64_t> CurrentTextAddress(const std::string& kallsyms) {
  auto text = ReadFileToString(kallsyms);
  if (!text.ok()) return std::nullopt;
  for (std::string_view line : Split(*text, '\n')) {
    // "ffffffff9a000000 T _text"
    auto parts = Split(line, ' ');
    if (parts.size() >= 3 && parts[2] == "_text") {
      uint64_t v = 0;
      for (char c : parts[0]) {
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return std::nullopt;
        v = v * 16 + static_cast<uint64_t>(d);
      }
      return v ? std::optional<uint64_t>(v) : std::nullopt;  // zeros: not root
    }
  }
  return std::nullopt;
}

std::vector<PstoreFile> ReadPstore(const std::string& dir) {
  std::vector<PstoreFile> out;
  auto names = ListDirectory(dir);
  if (!names.ok()) return out;
  std::sort(names->begin(), names->end());
  for (const std::string& n : *names) {
    // dmesg-*: the oops/panic log; console-*: the console ring; pmsg-*:
    // user messages. Compressed (.enc.z) records are left to the kernel.
    if (!StartsWith(n, "dmesg-") && !StartsWith(n, "console-")) continue;
    if (auto text = ReadFileToString(dir + "/" + n); text.ok()) out.push_back({n, std::move(*text)});
  }
  return out;
}

std::string KernelRelease() {
  struct utsname u {};
  if (::uname(&u) != 0) return {};
  return u.release;
}

}  // namespace

Result<CollectResult> Collect(const CollectOptions& options) {
  CollectResult result;
  std::string instance_dir = options.tracefs + "/instances/" + options.instance;
  if (!PathExists(instance_dir))
    return MakeError("no tracefs instance '{}' under {}/instances: this boot has no black box "
                     "(booted without the command line 'gpunoise blackbox arm' prints?)",
                     options.instance, options.tracefs);

  // Whose data is it? A persistent instance says; a plain one has no file.
  auto boot_text = ReadFileToString(instance_dir + "/last_boot_info");
  if (boot_text.ok()) {
    GN_ASSIGN_OR_RETURN(LastBootInfo info, ParseLastBootInfo(*boot_text));
    result.last_boot = info;
    if (info.current && !options.live)
      return MakeError("instance '{}' holds this boot's data, not the previous boot's (last_boot_info "
                       "says '# Current'): the kernel found no valid buffer of the boot before (a power "
                       "cycle, a different kernel, or validation failed and wiped it), or it was already "
                       "collected and re-armed",
                       options.instance);
  } else if (!options.live) {
    return MakeError("instance '{}' has no last_boot_info: it is not a persistent (boot-mapped) "
                     "buffer, so it cannot hold a previous boot (Linux 6.12+ with reserve_mem= and "
                     "trace_instance=NAME@LABEL; --live-instance reads a live one)",
                     options.instance);
  }

  std::string header_path = instance_dir + "/events/header_page";
  if (!PathExists(header_path)) header_path = options.tracefs + "/events/header_page";
  GN_ASSIGN_OR_RETURN(std::string header_text, ReadFileToString(header_path));
  GN_ASSIGN_OR_RETURN(PageLayout layout, ParsePageLayout(header_text));
  if (auto kb = ReadFileToString(instance_dir + "/buffer_subbuf_size_kb"); kb.ok())
    if (auto v = ParseUint64(Trim(*kb)); v && *v * 1024 > layout.data_offset)
      layout.data_size = static_cast<uint32_t>(*v * 1024 - layout.data_offset);

  // Every event this boot knows in the set, by name, to decode with the
  // markers' ids; ftrace/print's id is fixed (TRACE_PRINT) across boots.
  std::string events_dir = options.tracefs + "/events";
  std::vector<std::string> names = NodeEventSet(events_dir);
  EventTable current = LoadEventTable(events_dir, names, nullptr);
  const EventFormat* print = current.FindByName("ftrace", "print");
  if (!print) return MakeError("no format file for ftrace/print under {}: cannot read the markers", events_dir);

  // A live instance is stopped first, so that the read ends and what it
  // reads is what the per-CPU stats counted.
  if (options.live) GN_RETURN_IF_ERROR(Instance(instance_dir).SetTracingOn(false));
  GN_ASSIGN_OR_RETURN(std::vector<CpuPages> cpus, ReadInstancePages(instance_dir, layout));

  // Pass 1: the markers.
  EventTable print_only;
  print_only.Add(*print);
  DecodeCallbacks marker_cb;
  marker_cb.on_generic = [&](const GenericRecord& g) {
    for (const GenericField& f : g.fields)
      if (f.name == "buf") AddMarker(f.text, g.ts, &result.markers);
  };
  for (const CpuPages& c : cpus) DecodeCpuPages(c.cpu, c.pages, layout, print_only, marker_cb);
  result.table_source = "the buffer's own markers";
  if (result.markers.ids.empty() && !options.state_dir.empty()) {
    // Overwritten: the copy arm saved. For a live instance that is this
    // boot's; else the newest boot's other than this one.
    std::string this_boot = collect::ReadHostInfo().boot_id;
    std::string path;
    auto saved = LoadSavedMarkers(options.state_dir, options.live ? this_boot : std::string(), this_boot, &path);
    if (saved.ok()) {
      result.markers.ids = saved->ids;
      result.markers.conflicting_ids = saved->conflicting_ids;
      if (result.markers.headers.empty()) result.markers.headers = saved->headers;
      result.table_source = path + " (the buffer's own markers were overwritten)";
    }
  }
  GN_ASSIGN_OR_RETURN(EventTable table, TableFromMarkers(result.markers, current));
  std::sort(result.markers.anchors.begin(), result.markers.anchors.end(),
            [](const MarkerAnchor& a, const MarkerAnchor& b) { return a.record_ts < b.record_ts; });
  if (!result.markers.headers.empty()) {
    const MarkerHeader& h = result.markers.headers.back();
    result.boot_id = h.boot_id;
    std::string release = KernelRelease();
    if (!h.release.empty() && h.release != release)
      return MakeError("the buffer was written by kernel {}, this boot runs {}: the ring-buffer layout "
                       "and the event formats are only known to match for the same kernel",
                       h.release, release);
  }

  // Kernel addresses of the previous boot, placed in this boot's text.
  collect::KernelSymbols symbols = collect::KernelSymbols::Load(options.kallsyms);
  if (options.live) result.text_delta = 0;
  else if (result.last_boot)
    if (auto text = CurrentTextAddress(options.kallsyms)) result.text_delta = KernelTextDelta(*result.last_boot, *text);

  // Pass 2: everything, into the trace.
  GN_ASSIGN_OR_RETURN(auto sink, perfetto::TraceSink::Create(options.output));
  model::HostInfo host = collect::ReadHostInfo();
  if (!result.boot_id.empty()) host.boot_id = result.boot_id;
  model::SessionInfo session;
  session.tool_version = options.tool_version;
  session.hostname = host.hostname;
  session.boot_id = host.boot_id;
  session.machine_name = host.machine_name;
  session.command_line = options.command_line;
  session.end_reason = options.live ? "live instance drained" : "previous boot ended";
  if (!options.live && !result.markers.anchors.empty()) {
    const MarkerAnchor& a = result.markers.anchors.back();
    perfetto::ClockReadings clocks;
    clocks.boottime = a.boottime_ns;
    clocks.monotonic = a.monotonic_ns;
    clocks.realtime = a.realtime_ns;
    sink->set_clock_readings(clocks);
  }
  model::CollectorReport collector;
  collector.name = "blackbox";
  collector.state = model::CollectorState::kActive;
  for (const auto& [id, f] : table.all()) collector.attached_events.push_back(f.full_name() + " (ring buffer)");
  model::ProcessSnapshot no_processes;
  GN_RETURN_IF_ERROR(sink->WriteHeader(host, no_processes, session));

  model::IrqTable irqs;
  std::vector<model::KernelLogEntry> log;
  std::deque<std::string> strings;  // backing store of one page's generic fields
  std::string packet;
  Status write_status = OkStatus();
  for (const CpuPages& c : cpus) {
    std::vector<GenericRecord> generic;
    DecodeCallbacks cb;
    cb.on_events = [&](uint32_t cpu, std::span<const model::Event> events, bool lost) {
      if (Status st = sink->WriteCpuBatch(cpu, events, lost); !st.ok() && write_status.ok()) write_status = st;
    };
    cb.on_generic = [&](const GenericRecord& g) {
      // printk:console: the kernel log line at printk time, in the
      // caller's context, on the trace clock: also a log record.
      if (g.group == "printk" && g.event == "console")
        for (const GenericField& f : g.fields)
          if (f.name == "msg") {
            model::KernelLogEntry e;
            e.ts = g.ts;
            e.text = f.text;
            model::KernelLogMatch m = model::ClassifyKernelLog(e.text);
            e.cls = m.cls;
            e.about = m.device;
            e.source = model::KernelLogSource::kConsole;
            e.cpu = static_cast<int32_t>(g.cpu);
            e.tid = g.tid;
            log.push_back(std::move(e));
          }
      generic.push_back(g);
    };
    cb.on_irq_name = [&](int32_t irq, std::string_view name) {
      if (irqs[irq].name.empty()) irqs[irq].name = std::string(name);
    };
    CpuDecodeStats s = DecodeCpuPages(c.cpu, c.pages, layout, table, cb);

    // Generic records go in bundles of their own, with code addresses named.
    for (GenericRecord& g : generic) {
      std::vector<GenericField> extra;
      for (const GenericField& f : g.fields) {
        if (f.is_string || !IsCodeAddressField(f.name) || !result.text_delta || f.value == 0) continue;
        std::string sym = symbols.Symbolize(static_cast<uint64_t>(f.value) + *result.text_delta);
        if (StartsWith(sym, "0x")) continue;
        ++result.symbolized;
        extra.push_back(GenericField{f.name + "_sym", true, 0, sym});
      }
      g.fields.insert(g.fields.end(), extra.begin(), extra.end());
    }
    std::vector<const GenericRecord*> in_order;
    for (const GenericRecord& g : generic) in_order.push_back(&g);
    // A failed write is kept and the rest still tried (as for the events).
    (void)WriteGenericBundles(c.cpu, in_order, [&](std::string_view bundle) {
      if (Status st = sink->writer().WriteSerializedPacket(bundle); !st.ok() && write_status.ok()) write_status = st;
      return OkStatus();
    });

    model::CpuLoss loss;
    loss.cpu = c.cpu;
    loss.events = s.records;
    loss.lost = LostRecords(s, c.stats_before);
    if (loss.lost) loss.lost_by_kind["unknown (ring buffer overwritten)"] = loss.lost;
    loss.decode_errors = s.damaged_pages + s.unknown_ids;
    session.cpus.push_back(loss);
    if (s.first_ts && (!session.start_ts || s.first_ts < session.start_ts)) session.start_ts = s.first_ts;
    session.end_ts = std::max(session.end_ts, s.last_ts);
    collector.events += s.records;
    collector.lost += loss.lost;
    result.events += s.events;
    result.generic += s.generic;
    result.lost += loss.lost;
    result.cpus.push_back(s);
    result.buffer_stats.push_back(c.stats_before);
  }
  session.collectors.push_back(collector);
  result.pstore = ReadPstore(options.pstore_dir);
  // The crashed kernel's own last words (pstore) go after the buffer's end:
  // pstore keeps the kernel's local-clock times, which cannot be placed.
  for (const PstoreFile& p : result.pstore)
    for (std::string_view line : Split(p.text, '\n')) {
      if (Trim(line).empty()) continue;
      model::KernelLogEntry e;
      e.ts = session.end_ts;
      e.text = fmt::format("{}: {}", p.name, line);
      e.level = 3;
      model::KernelLogMatch m = model::ClassifyKernelLog(line);
      e.cls = m.cls;
      e.about = m.device;
      log.push_back(std::move(e));
    }
  result.log_records = log.size();
  if (!log.empty()) {
    int64_t realtime_minus_boottime = 0;
    if (!options.live && !result.markers.anchors.empty()) {
      const MarkerAnchor& a = result.markers.anchors.back();
      realtime_minus_boottime = static_cast<int64_t>(a.realtime_ns) - static_cast<int64_t>(a.boottime_ns);
    } else {
      perfetto::ClockReadings now = perfetto::ReadClocks();
      realtime_minus_boottime = static_cast<int64_t>(now.realtime) - static_cast<int64_t>(now.boottime);
    }
    packet.clear();
    perfetto::EncodeKernelLogPacket(log, realtime_minus_boottime, 0, perfetto::kKernelLogSequenceId, &packet);
    GN_RETURN_IF_ERROR(sink->writer().WriteSerializedPacket(packet));
  }
  sink->set_irq_table(irqs);
  GN_RETURN_IF_ERROR(write_status);
  GN_RETURN_IF_ERROR(sink->WriteFooter(no_processes, session));
  GN_RETURN_IF_ERROR(sink->Commit());
  result.output = options.output;
  return result;
}

std::string FormatCollectSummary(const CollectResult& r) {
  std::string out;
  out += fmt::format("black box: {} records decoded ({} as scheduler/irq/net events, {} generic), {} lost "
                     "before the end\n",
                     r.events + r.generic, r.events, r.generic, r.lost);
  if (!r.boot_id.empty()) out += fmt::format("  written by boot {}\n", r.boot_id);
  out += fmt::format("  event-id table: {}\n", r.table_source);
  if (!r.markers.anchors.empty()) {
    const MarkerAnchor& a = r.markers.anchors.back();
    out += fmt::format("  last wall-clock anchor: realtime {}.{:09d} s at trace time {} ns\n",
                       a.realtime_ns / 1000000000, a.realtime_ns % 1000000000, a.record_ts);
  }
  for (size_t i = 0; i < r.cpus.size(); ++i) {
    const CpuDecodeStats& s = r.cpus[i];
    double span_s = s.last_ts > s.first_ts ? (s.last_ts - s.first_ts) / 1e9 : 0.0;
    out += fmt::format("  cpu {}: {} pages, {} records over the last {:.3f} s, {} lost ({} pages flagged)",
                       s.cpu, s.pages, s.records, span_s,
                       i < r.buffer_stats.size() ? LostRecords(s, r.buffer_stats[i]) : s.loss(), s.pages_with_loss);
    if (s.damaged_pages) out += fmt::format(", {} damaged pages", s.damaged_pages);
    if (s.unknown_ids) out += fmt::format(", {} records of unknown ids", s.unknown_ids);
    if (s.backwards) out += fmt::format(", {} records out of time order", s.backwards);
    out += "\n";
  }
  if (r.text_delta && *r.text_delta) out += fmt::format("  kernel text moved by {:+#x} since that boot (KASLR)\n", *r.text_delta);
  if (r.log_records) out += fmt::format("  {} kernel log records (printk:console, pstore) in the trace's log\n", r.log_records);
  if (r.symbolized) out += fmt::format("  {} code addresses symbolized\n", r.symbolized);
  if (r.pstore.empty()) {
    out += "  pstore: no records (no ramoops/efi-pstore log of the crashed kernel)\n";
  } else {
    for (const PstoreFile& p : r.pstore) {
      out += fmt::format("  pstore {} ({} bytes), its last lines:\n", p.name, p.text.size());
      std::vector<std::string_view> lines = Split(p.text, '\n');
      while (!lines.empty() && Trim(lines.back()).empty()) lines.pop_back();
      size_t from = lines.size() > 10 ? lines.size() - 10 : 0;
      for (size_t i = from; i < lines.size(); ++i) out += fmt::format("    {}\n", lines[i]);
    }
  }
  out += fmt::format("  trace: {}\n", r.output);
  return out;
}

}  // namespace gpunoise::blackbox
