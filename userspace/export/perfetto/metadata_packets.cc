#include "export/perfetto/metadata_packets.h"

#include <fmt/format.h>

#include "common/clock.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"

namespace gpunoise::perfetto {

ClockReadings ReadClocks() {
  ClockReadings c;
  // Read BOOTTIME twice around the others and keep the midpoint, so the
  // snapshot's clocks describe one instant as closely as user space can.
  uint64_t boot0 = BoottimeNs();
  c.monotonic = MonotonicNs();
  c.realtime = RealtimeNs();
  c.monotonic_raw = ClockNs(CLOCK_MONOTONIC_RAW);
  uint64_t boot1 = BoottimeNs();
  c.boottime = boot0 + (boot1 - boot0) / 2;
  return c;
}

void FillClockSnapshot(TracePacket* packet, const ClockReadings& clocks) {
  packet->Clear();
  packet->set_timestamp(clocks.boottime);
  auto* snap = packet->mutable_clock_snapshot();
  auto add = [&](BuiltinClock id, uint64_t ts) {
    auto* c = snap->add_clocks();
    c->set_clock_id(id);
    c->set_timestamp(ts);
  };
  add(BUILTIN_CLOCK_BOOTTIME, clocks.boottime);
  add(BUILTIN_CLOCK_MONOTONIC, clocks.monotonic);
  add(BUILTIN_CLOCK_REALTIME, clocks.realtime);
  add(BUILTIN_CLOCK_MONOTONIC_RAW, clocks.monotonic_raw);
  snap->set_primary_trace_clock(BUILTIN_CLOCK_BOOTTIME);
}

void FillSystemInfo(TracePacket* packet, const model::HostInfo& host,
                    std::string_view tool_version) {
  packet->Clear();
  auto* info = packet->mutable_system_info();
  auto* uts = info->mutable_utsname();
  uts->set_sysname(host.sysname);
  uts->set_release(host.release);
  uts->set_version(host.version);
  uts->set_machine(host.machine);
  info->set_tracing_service_version(std::string(tool_version));
  // Perfetto (v57 on) labels a machine with it; the merger tells machines
  // apart by it when a trace has no boot_id.
  if (!host.machine_name.empty()) info->set_machine_name(host.machine_name);
  if (host.page_size) info->set_page_size(host.page_size);
  if (host.num_cpus) info->set_num_cpus(host.num_cpus);
  if (host.hz) info->set_hz(host.hz);
  if (host.ram_bytes) info->set_system_ram_bytes(host.ram_bytes);
  info->set_timezone_off_mins(host.timezone_off_mins);
}

void FillProcessTree(TracePacket* packet, const model::ProcessSnapshot& snapshot) {
  packet->Clear();
  packet->set_timestamp(snapshot.ts);
  auto* tree = packet->mutable_process_tree();
  for (const auto& p : snapshot.processes) {
    auto* out = tree->add_processes();
    out->set_pid(p.pid);
    out->set_ppid(p.ppid);
    if (p.uid >= 0) out->set_uid(p.uid);
    if (p.is_kthread) out->set_is_kthread(true);
    if (p.cmdline.empty()) {
      out->add_cmdline(p.comm);
      out->set_cmdline_is_comm(true);
    } else {
      for (const auto& arg : p.cmdline) out->add_cmdline(arg);
    }
    if (p.start_from_boot_ns) out->set_process_start_from_boot(p.start_from_boot_ns);
    // The pid in each pid namespace, the host's first (what a container's
    // GPU fragments name it by), as Perfetto's own recorder writes it.
    if (p.identity.nspid.size() > 1)
      for (int32_t id : p.identity.nspid) out->add_nspid(id);
  }
  for (const auto& t : snapshot.threads) {
    auto* out = tree->add_threads();
    out->set_tid(t.tid);
    out->set_tgid(t.tgid);
    out->set_name(t.name);
    if (t.nstid.size() > 1)
      for (int32_t id : t.nstid) out->add_nstid(id);
  }
  tree->set_collection_end_timestamp(snapshot.ts);
}

void FillInterruptInfo(TracePacket* packet, const model::IrqTable& irqs) {
  packet->Clear();
  auto* info = packet->mutable_interrupt_info();
  for (const auto& [irq, desc] : irqs) {
    if (irq < 0 || desc.name.empty()) continue;
    auto* m = info->add_irq_mapping();
    m->set_irq_id(static_cast<uint32_t>(irq));
    m->set_name(desc.name);
  }
}

void FillFtraceStats(TracePacket* packet, StatsPhase phase, const model::SessionInfo& session) {
  packet->Clear();
  packet->set_timestamp(phase == StatsPhase::kStart ? session.start_ts : session.end_ts);
  auto* stats = packet->mutable_ftrace_stats();
  stats->set_phase(phase == StatsPhase::kStart ? FtraceStats::START_OF_TRACE
                                               : FtraceStats::END_OF_TRACE);
  for (const auto& cpu : session.cpus) {
    auto* c = stats->add_cpu_stats();
    c->set_cpu(cpu.cpu);
    bool end = phase == StatsPhase::kEnd;
    // Perfetto's meaning, field by field (ftrace_stats.proto): the BPF ring
    // never overwrites, a failed reserve loses the new record, so a full
    // ring is dropped_events (the trace processor: the END - START
    // difference is ftrace_cpu_dropped_events_delta, an error) and overrun,
    // which is overwrite-mode loss, stays 0; a consumer that adds the two
    // counts each loss once. entries and bytes_read are what is left in the
    // ring: the final drain empties it. Losses without a Perfetto field (user
    // space, maps, programs, GPU) are gpunoise metadata, never here.
    c->set_entries(0);
    c->set_overrun(0);
    c->set_commit_overrun(0);
    c->set_bytes_read(0);
    c->set_read_events(end ? cpu.events : 0);
    c->set_dropped_events(end ? cpu.lost : 0);
    c->set_now_ts(static_cast<double>(end ? session.end_ts : session.start_ts) / 1e9);
  }
  for (const auto& collector : session.collectors)
    for (const auto& missing : collector.missing_events) stats->add_failed_ftrace_events(missing);
}

namespace {

// Upstream has no field for the clock discipline; the session summary is
// where a reader of this project's traces finds it.
void AddClockDisciplineArgs(TrackEvent* e, const std::string& prefix, const model::ClockDiscipline& c) {
  if (!c.read) return;
  AddArg(e, prefix + "synced", c.synced);
  AddArg(e, prefix + "maxerror_us", c.maxerror_us);
  AddArg(e, prefix + "esterror_us", c.esterror_us);
  AddArg(e, prefix + "offset_ns", c.offset_ns);
  std::string daemons, ptp;
  for (const auto& d : c.daemons) daemons += (daemons.empty() ? "" : ",") + d;
  for (const auto& p : c.ptp_clocks) ptp += (ptp.empty() ? "" : ",") + p;
  AddArg(e, prefix + "daemons", daemons);
  AddArg(e, prefix + "ptp_clocks", ptp);
}

}  // namespace

Status WriteSessionSummary(TrackEventWriter& writer, const model::SessionInfo& session,
                           TraceFileWriter& out) {
  TracePacket packet;
  uint64_t track = writer.TrackUuid(kSessionTrackName);
  writer.FillTrackDescriptor(&packet, track, kSessionTrackName, 0,
                             "what gpunoise recorded, and what it lost");
  GN_RETURN_IF_ERROR(out.WritePacket(packet));

  TrackEvent* e = writer.FillInstant(&packet, session.end_ts ? session.end_ts : session.start_ts,
                                     track, kSessionEventName, "gpunoise");
  AddArg(e, "tool_version", session.tool_version);
  AddArg(e, "hostname", session.hostname);
  if (!session.boot_id.empty()) AddArg(e, "boot_id", session.boot_id);
  if (!session.machine_name.empty()) AddArg(e, "machine_name", session.machine_name);
  AddClockDisciplineArgs(e, "clock.start.", session.clock_start);
  AddClockDisciplineArgs(e, "clock.end.", session.clock_end);
  AddArg(e, "command_line", session.command_line);
  AddArg(e, "start_ts", session.start_ts);
  AddArg(e, "end_ts", session.end_ts);
  AddArg(e, "end_reason", session.end_reason);
  AddArg(e, "bpf_recursion_misses", session.bpf_recursion_misses);
  AddArg(e, "lost_events", model::TotalKernelAndUserLoss(session));
  AddArg(e, "records_outside_cpus", session.records_outside_cpus);
  AddArg(e, "switch_chain_checked", session.switch_chain_checked);
  for (const auto& c : session.collectors) {
    std::string prefix = "collector." + c.name + ".";
    AddArg(e, prefix + "state", model::CollectorStateName(c.state));
    if (!c.reason.empty()) AddArg(e, prefix + "reason", c.reason);
    AddArg(e, prefix + "events", c.events);
    AddArg(e, prefix + "lost", c.lost);
    std::string missing;
    for (const auto& m : c.missing_events) missing += (missing.empty() ? "" : ",") + m;
    if (!missing.empty()) AddArg(e, prefix + "missing_events", missing);
  }
  for (const auto& p : session.program_misses)
    AddArg(e, fmt::format("program.{}.{}.missed", p.collector, p.program), p.missed);
  for (const auto& m : session.map_full)
    AddArg(e, fmt::format("map.{}.{}.full", m.collector, m.map), m.full);
  for (const auto& cpu : session.cpus) {
    std::string prefix = fmt::format("cpu.{}.", cpu.cpu);
    AddArg(e, prefix + "events", cpu.events);
    AddArg(e, prefix + "bytes", cpu.bytes);
    AddArg(e, prefix + "lost", cpu.lost);
    for (const auto& [kind, n] : cpu.lost_by_kind) AddArg(e, prefix + "lost_kind." + kind, n);
    if (cpu.decode_errors) AddArg(e, prefix + "decode_errors", cpu.decode_errors);
    if (cpu.unwritten) AddArg(e, prefix + "unwritten", cpu.unwritten);
    for (const auto& [kind, n] : cpu.unwritten_by_kind) AddArg(e, prefix + "unwritten_kind." + kind, n);
    AddArg(e, prefix + "unseen_switches", cpu.unseen_switches);
  }
  return out.WritePacket(packet);
}

}  // namespace gpunoise::perfetto
