// Packets that describe a recording rather than its events: clocks, host,
// processes, IRQ names, per-CPU loss, and gpunoise's own session summary.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "export/perfetto/trace_packet_builder.h"
#include "model/host_info.h"
#include "model/irq_info.h"
#include "model/process_snapshot.h"
#include "model/session_info.h"

namespace gpunoise::perfetto {

class TrackEventWriter;
class TraceFileWriter;

struct ClockReadings {
  uint64_t boottime = 0, monotonic = 0, realtime = 0, monotonic_raw = 0;
};
ClockReadings ReadClocks();

// BOOTTIME is the primary trace clock (DESIGN.md decision 1); MONOTONIC and
// REALTIME let traces of several nodes be aligned.
void FillClockSnapshot(TracePacketBuilder* packet, const ClockReadings& clocks);
void FillSystemInfo(TracePacketBuilder* packet, const model::HostInfo& host, std::string_view tool_version);
void FillProcessTree(TracePacketBuilder* packet, const model::ProcessSnapshot& snapshot);
void FillInterruptInfo(TracePacketBuilder* packet, const model::IrqTable& irqs);

enum class StatsPhase { kStart, kEnd };
// Per-CPU events read, records lost and bytes read go where Perfetto's own
// recorder puts its ftrace ring statistics, so the trace processor's stats
// table and the UI's data-loss warning show them.
void FillFtraceStats(TracePacketBuilder* packet, StatsPhase phase, const model::SessionInfo& session);

// gpunoise's own session summary: an instant on a "gpunoise" track whose args
// name the host, the command, each collector's state and counts, and every
// loss by stage and cause (model/session_info.h): cpu.N.lost (ring full, also
// in FtraceCpuStats), cpu.N.lost_kind.KIND, cpu.N.decode_errors,
// cpu.N.unwritten, program.COLLECTOR.PROG.missed, map.COLLECTOR.MAP.{full,overwritten,unpaired},
// records_outside_cpus. The report reads it back (import/session_summary_reader.h).
inline constexpr std::string_view kSessionTrackName = "gpunoise session";
inline constexpr std::string_view kSessionEventName = "gpunoise recording";
Status WriteSessionSummary(TrackEventWriter& writer, const model::SessionInfo& session,
                           TraceFileWriter& out);

}  // namespace gpunoise::perfetto
