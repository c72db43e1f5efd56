#include "export/perfetto/metadata_packets.h"

#include <fmt/format.h>

#include "common/clock.h"
#include "export/perfetto/protos/perfetto_fields.h"
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

void FillClockSnapshot(TracePacketBuilder* packet, const ClockReadings& clocks) {
  packet->Clear();
  packet->w().Varint(pf::TracePacket::kTimestamp, clocks.boottime);
  packet->Open(pf::TracePacket::kClockSnapshot);
  ProtoWriter w = packet->w();
  auto add = [&](uint32_t id, uint64_t ts) {
    size_t c = w.BeginMessage(pf::ClockSnapshot::kClocks);
    w.Varint(pf::ClockSnapshot::Clock::kClockId, id);
    w.Varint(pf::ClockSnapshot::Clock::kTimestamp, ts);
    w.EndMessage(c);
  };
  add(pf::BUILTIN_CLOCK_BOOTTIME, clocks.boottime);
  add(pf::BUILTIN_CLOCK_MONOTONIC, clocks.monotonic);
  add(pf::BUILTIN_CLOCK_REALTIME, clocks.realtime);
  add(pf::BUILTIN_CLOCK_MONOTONIC_RAW, clocks.monotonic_raw);
  w.Varint(pf::ClockSnapshot::kPrimaryTraceClock, pf::BUILTIN_CLOCK_BOOTTIME);
}

void FillSystemInfo(TracePacketBuilder* packet, const model::HostInfo& host,
                    std::string_view tool_version) {
  packet->Clear();
  packet->Open(pf::TracePacket::kSystemInfo);
  ProtoWriter info = packet->w();
  size_t uts = info.BeginMessage(pf::SystemInfo::kUtsname);
  info.Bytes(pf::Utsname::kSysname, host.sysname);
  info.Bytes(pf::Utsname::kRelease, host.release);
  info.Bytes(pf::Utsname::kVersion, host.version);
  info.Bytes(pf::Utsname::kMachine, host.machine);
  info.EndMessage(uts);
  info.Bytes(pf::SystemInfo::kTracingServiceVersion, tool_version);
  // Perfetto (v57 on) labels a machine with it; the merger tells machines
  // apart by it when a trace has no boot_id.
  if (!host.machine_name.empty()) info.Bytes(pf::SystemInfo::kMachineName, host.machine_name);
  if (host.page_size) info.Varint(pf::SystemInfo::kPageSize, host.page_size);
  if (host.num_cpus) info.Varint(pf::SystemInfo::kNumCpus, host.num_cpus);
  if (host.hz) info.Int(pf::SystemInfo::kHz, host.hz);
  if (host.ram_bytes) info.Varint(pf::SystemInfo::kSystemRamBytes, host.ram_bytes);
  info.Int(pf::SystemInfo::kTimezoneOffMins, host.timezone_off_mins);
}

void FillProcessTree(TracePacketBuilder* packet, const model::ProcessSnapshot& snapshot) {
  packet->Clear();
  packet->w().Varint(pf::TracePacket::kTimestamp, snapshot.ts);
  packet->Open(pf::TracePacket::kProcessTree);
  ProtoWriter w = packet->w();
  for (const auto& p : snapshot.processes) {
    size_t out = w.BeginMessage(pf::ProcessTree::kProcesses);
    w.Int(pf::ProcessTree::Process::kPid, p.pid);
    w.Int(pf::ProcessTree::Process::kPpid, p.ppid);
    if (p.uid >= 0) w.Int(pf::ProcessTree::Process::kUid, p.uid);
    if (p.is_kthread) w.Bool(pf::ProcessTree::Process::kIsKthread, true);
    if (p.cmdline.empty()) {
      w.Bytes(pf::ProcessTree::Process::kCmdline, p.comm);
      w.Bool(pf::ProcessTree::Process::kCmdlineIsComm, true);
    } else {
      for (const auto& arg : p.cmdline) w.Bytes(pf::ProcessTree::Process::kCmdline, arg);
    }
    if (p.start_from_boot_ns) w.Varint(pf::ProcessTree::Process::kProcessStartFromBoot, p.start_from_boot_ns);
    // The pid in each pid namespace, the host's first (what a container's
    // GPU fragments name it by), as Perfetto's own recorder writes it.
    if (p.identity.nspid.size() > 1)
      for (int32_t id : p.identity.nspid) w.Int(pf::ProcessTree::Process::kNspid, id);
    w.EndMessage(out);
  }
  for (const auto& t : snapshot.threads) {
    size_t out = w.BeginMessage(pf::ProcessTree::kThreads);
    w.Int(pf::ProcessTree::Thread::kTid, t.tid);
    w.Int(pf::ProcessTree::Thread::kTgid, t.tgid);
    w.Bytes(pf::ProcessTree::Thread::kName, t.name);
    if (t.nstid.size() > 1)
      for (int32_t id : t.nstid) w.Int(pf::ProcessTree::Thread::kNstid, id);
    w.EndMessage(out);
  }
  w.Varint(pf::ProcessTree::kCollectionEndTimestamp, snapshot.ts);
}

void FillInterruptInfo(TracePacketBuilder* packet, const model::IrqTable& irqs) {
  packet->Clear();
  packet->Open(pf::TracePacket::kInterruptInfo);
  ProtoWriter w = packet->w();
  for (const auto& [irq, desc] : irqs) {
    if (irq < 0 || desc.name.empty()) continue;
    size_t m = w.BeginMessage(pf::InterruptInfo::kIrqMapping);
    w.Varint(pf::InterruptInfo::InterruptMapping::kIrqId, static_cast<uint32_t>(irq));
    w.Bytes(pf::InterruptInfo::InterruptMapping::kName, desc.name);
    w.EndMessage(m);
  }
}

void FillFtraceStats(TracePacketBuilder* packet, StatsPhase phase, const model::SessionInfo& session) {
  packet->Clear();
  packet->w().Varint(pf::TracePacket::kTimestamp, phase == StatsPhase::kStart ? session.start_ts : session.end_ts);
  packet->Open(pf::TracePacket::kFtraceStats);
  ProtoWriter w = packet->w();
  w.Varint(pf::FtraceStats::kPhase,
           phase == StatsPhase::kStart ? pf::FtraceStats::START_OF_TRACE : pf::FtraceStats::END_OF_TRACE);
  for (const auto& cpu : session.cpus) {
    size_t c = w.BeginMessage(pf::FtraceStats::kCpuStats);
    w.Varint(pf::FtraceCpuStats::kCpu, cpu.cpu);
    bool end = phase == StatsPhase::kEnd;
    // Perfetto's meaning, field by field (ftrace_stats.proto): the BPF ring
    // never overwrites, a failed reserve loses the new record, so a full
    // ring is dropped_events (the trace processor: the END - START
    // difference is ftrace_cpu_dropped_events_delta, an error) and overrun,
    // which is overwrite-mode loss, stays 0; a consumer that adds the two
    // counts each loss once. entries and bytes_read are what is left in the
    // ring: the final drain empties it. Losses without a Perfetto field (user
    // space, maps, programs, GPU) are gpunoise metadata, never here.
    w.Varint(pf::FtraceCpuStats::kEntries, 0);
    w.Varint(pf::FtraceCpuStats::kOverrun, 0);
    w.Varint(pf::FtraceCpuStats::kCommitOverrun, 0);
    w.Varint(pf::FtraceCpuStats::kBytesRead, 0);
    w.Varint(pf::FtraceCpuStats::kReadEvents, end ? cpu.events : 0);
    w.Varint(pf::FtraceCpuStats::kDroppedEvents, end ? cpu.lost : 0);
    w.Double(pf::FtraceCpuStats::kNowTs, static_cast<double>(end ? session.end_ts : session.start_ts) / 1e9);
    w.EndMessage(c);
  }
  for (const auto& collector : session.collectors)
    for (const auto& missing : collector.missing_events) w.Bytes(pf::FtraceStats::kFailedFtraceEvents, missing);
}

namespace {

// Upstream has no field for the clock discipline; the session summary is
// where a reader of this project's traces finds it.
void AddClockDisciplineArgs(EventRef e, const std::string& prefix, const model::ClockDiscipline& c) {
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
  TracePacketBuilder packet;
  uint64_t track = writer.TrackUuid(kSessionTrackName);
  writer.FillTrackDescriptor(&packet, track, kSessionTrackName, 0,
                             "what gpunoise recorded, and what it lost");
  GN_RETURN_IF_ERROR(out.WritePacket(packet));

  EventRef e = writer.FillInstant(&packet, session.end_ts ? session.end_ts : session.start_ts,
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
  if (session.softirqs_audited) AddArg(e, "softirq.audited", true);
  if (session.netrx_sample_every) {
    AddArg(e, "softirq.netrx_sample_every", uint64_t{session.netrx_sample_every});
    AddArg(e, "softirq.netrx_untimed", session.netrx_untimed);
  }
  if (session.unread_before_loss_ns) {
    AddArg(e, "drain.unread_before_loss_ns", session.unread_before_loss_ns);
    AddArg(e, "drain.unread_before_loss_from", session.unread_before_loss_from);
  }
  if (session.first_ring_loss_seen) AddArg(e, "drain.first_ring_loss_seen", session.first_ring_loss_seen);
  if (session.drain_yielded) {
    AddArg(e, "drain.yielded", true);
    AddArg(e, "drain.idle_from", session.drain_idle_from);
    AddArg(e, "drain.raises", session.drain_raises);
    AddArg(e, "drain.raised_for_late", session.drain_raised_for_late);
    AddArg(e, "drain.raised_for_doorbell", session.drain_raised_for_doorbell);
    AddArg(e, "drain.raised_ns", session.drain_raised_ns);
  }
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
  for (const auto& m : session.map_losses)
    AddArg(e, fmt::format("map.{}.{}.{}", m.collector, m.map, model::MapLossKindName(m.kind)), m.count);
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
    for (uint32_t vec = 0; vec < model::kNumSoftirqVecs; ++vec)
      if (cpu.unreported_softirqs[vec])
        AddArg(e, prefix + "unreported_softirqs." + std::string(model::SoftirqName(vec)), cpu.unreported_softirqs[vec]);
  }
  return out.WritePacket(packet);
}

}  // namespace gpunoise::perfetto
