// The report's header says every loss the trace records, by stage and cause,
// with the same total `record` printed (DESIGN.md decision 3); for a trace
// from Perfetto's own recorder, what its ftrace, service and packet stats
// say.
#include <gtest/gtest.h>

#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"
#include "import/test_trace.h"
#include "report/report_of.h"
#include "report/report_session.h"

namespace gpunoise::report {
namespace {

using testing::ScopedTempDir;
using testing::SwitchBundle;
using testing::SwitchSpec;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kBase = 7'000'000'000;

// 100 ms of task 100 and idle taking turns on CPUs 0 and 1; with
// `chain_break`, CPU 1 once switches out a task (300) that never switched in.
std::vector<perfetto::TracePacket> Switches(bool chain_break) {
  std::vector<perfetto::TracePacket> out;
  for (uint32_t cpu = 0; cpu < 2; ++cpu) {
    std::vector<SwitchSpec> s;
    for (uint64_t t = kBase; t < kBase + 100 * kMs; t += 10 * kMs) {
      s.push_back({t, 0, 100});
      s.push_back({t + 5 * kMs, 100, 0});
    }
    if (chain_break && cpu == 1) s[4].prev = 300;
    out.push_back(SwitchBundle(cpu, s));
  }
  return out;
}

// The header: everything before the first blank line.
std::string Header(const std::string& report) { return report.substr(0, report.find("\n\n") + 1); }

model::SessionInfo LossySession() {
  model::SessionInfo s;
  s.tool_version = "0.test";
  s.start_ts = kBase;
  s.end_ts = kBase + 100 * kMs;
  model::CpuLoss c0;
  c0.cpu = 0;
  c0.events = 40;
  c0.lost = 12;
  c0.lost_by_kind = {{"sched_switch", 8}, {"sched_waking", 4}};
  c0.decode_errors = 2;
  model::CpuLoss c1;
  c1.cpu = 1;
  c1.events = 40;
  c1.unwritten = 3;
  s.cpus = {c0, c1};
  s.program_misses = {{"sched", "gn_sched_switch", 5}};
  s.bpf_recursion_misses = 5;
  s.map_losses = {{"net", "gn_samples", 17}};
  s.records_outside_cpus = 1;
  s.end_reason = "disk full";
  return s;
}

std::string WriteGpunoiseTrace(const std::string& dir, const model::SessionInfo& session, bool chain_break) {
  std::string path = dir + "/gpunoise.pftrace";
  auto out = perfetto::TraceFileWriter::Create(path, 0);
  EXPECT_TRUE(out.ok());
  for (const auto& p : Switches(chain_break)) EXPECT_TRUE(out->WritePacket(p).ok());
  perfetto::TracePacketBuilder stats;
  perfetto::FillFtraceStats(&stats, perfetto::StatsPhase::kStart, session);
  EXPECT_TRUE(out->WritePacket(stats).ok());
  perfetto::FillFtraceStats(&stats, perfetto::StatsPhase::kEnd, session);
  EXPECT_TRUE(out->WritePacket(stats).ok());
  perfetto::TrackEventWriter writer(1, 42);
  EXPECT_TRUE(perfetto::WriteSessionSummary(writer, session, *out).ok());
  EXPECT_TRUE(out->Commit().ok());
  return path;
}

TEST(ReportLossHeader, ShowsEachStageAndCauseAndTheTotalRecordPrinted) {
  ScopedTempDir dir;
  model::SessionInfo session = LossySession();
  ASSERT_EQ(model::TotalKernelAndUserLoss(session), 23u);
  std::string path = WriteGpunoiseTrace(dir.path(), session, false);
  std::string h = Header(ReportOf(path));
  EXPECT_NE(h.find("  lost events: 23 (source: gpunoise session summary)\n"), std::string::npos) << h;
  EXPECT_NE(h.find("    kernel ring full: 12: CPU 0 12 (sched_switch 8, sched_waking 4)\n"), std::string::npos) << h;
  EXPECT_NE(h.find("    eBPF program runs the kernel skipped (another program ran on the CPU): 5: "
                   "sched/gn_sched_switch 5\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("    user space: 6: 2 failed to decode, 3 read but not written (the trace file had failed), "
                   "1 from CPUs outside the recording's CPU set\n"),
            std::string::npos)
      << h;
  // A full map is an undercounting aggregate, not lost events: not in the 23.
  EXPECT_NE(h.find("  aggregates undercount (a full in-kernel map refused updates; no event lost): "
                   "net/gn_samples 17\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("  recording ended: disk full\n"), std::string::npos) << h;
  EXPECT_EQ(h.find("never delivered"), std::string::npos) << h;

  std::string json = ReportOf(path, true);
  EXPECT_NE(json.find("\"total_lost\": 23"), std::string::npos) << json;
  EXPECT_NE(json.find("\"kernel_ring_full\": 12"), std::string::npos);
  EXPECT_NE(json.find("\"records_outside_cpus\": 1"), std::string::npos);
  EXPECT_NE(json.find("\"map\": \"gn_samples\""), std::string::npos);
  EXPECT_NE(json.find("\"end_reason\": \"disk full\""), std::string::npos);
  EXPECT_NE(json.find("\"sched_waking\": 4"), std::string::npos);
}

// A ring that lost records while the recorder went 142 ms without reading
// it: the header says so, and when, so that a stall of the recorder (or of
// the VM under it) is not taken for a ring too small for the event rate.
TEST(ReportLossHeader, ARingLossSaysHowLongTheRecorderLeftItsRingsUnreadAndWhen) {
  ScopedTempDir dir;
  model::SessionInfo session = LossySession();
  session.unread_before_loss_ns = 142'300'000;
  session.unread_before_loss_from = kBase + 31 * kMs;
  session.first_ring_loss_seen = kBase + 174 * kMs;
  std::string path = WriteGpunoiseTrace(dir.path(), session, false);
  std::string h = Header(ReportOf(path));
  EXPECT_NE(h.find("    kernel ring full: 12: CPU 0 12 (sched_switch 8, sched_waking 4)\n"
                   "      a drain first found a ring short at +0.174 s; before such a drain the rings had gone up to "
                   "142.3 ms unread (from +0.031 s)\n"),
            std::string::npos)
      << h;
  std::string json = ReportOf(path, true);
  EXPECT_NE(json.find("\"recorder_pace\": {\n"), std::string::npos) << json;
  EXPECT_NE(json.find("\"first_ring_loss_seen_ns\": 174000000,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"unread_before_loss_ns\": 142300000,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"unread_before_loss_from_ns\": 31000000\n"), std::string::npos) << json;

  // Without ring loss the pace explains nothing: not in the header.
  session.cpus[0].lost = 0;
  session.cpus[0].lost_by_kind.clear();
  session.first_ring_loss_seen = 0;
  path = WriteGpunoiseTrace(dir.path(), session, false);
  h = Header(ReportOf(path));
  EXPECT_EQ(h.find("unread"), std::string::npos) << h;
}

// A per-CPU log that wrapped lost records, and unpaired callbacks were left
// out: neither is a full map (a quiet run once read "a full in-kernel map
// refused updates: kwork/gn_kw_open (callbacks unpaired) 50").
TEST(ReportLossHeader, OverwrittenLogsAndUnpairedCallbacksAreNotCalledFullMaps) {
  ScopedTempDir dir;
  model::SessionInfo session = LossySession();
  session.map_losses.push_back({"kwork", "gn_kw_log", 7, model::MapLossKind::kOverwritten});
  session.map_losses.push_back({"kwork", "gn_kw_open", 50, model::MapLossKind::kUnpaired});
  std::string path = WriteGpunoiseTrace(dir.path(), session, false);
  std::string h = Header(ReportOf(path));
  EXPECT_NE(h.find("  lost events: 23 (source: gpunoise session summary)\n"), std::string::npos) << h;
  EXPECT_NE(h.find("  in-kernel logs overwritten before they were read (those records are lost, outside the count "
                   "above): kwork/gn_kw_log 7\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("  callbacks left out (their begin was seen without their end, or their end without their "
                   "begin): kwork/gn_kw_open 50\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("  aggregates undercount (a full in-kernel map refused updates; no event lost): "
                   "net/gn_samples 17\n"),
            std::string::npos)
      << h;

  std::string json = ReportOf(path, true);
  size_t logs = json.find("\"logs_overwritten\"");
  ASSERT_NE(logs, std::string::npos) << json;
  EXPECT_NE(json.find("\"lost\": 7", logs), std::string::npos) << json;
  size_t unpaired = json.find("\"callbacks_unpaired\"");
  ASSERT_NE(unpaired, std::string::npos) << json;
  EXPECT_NE(json.find("\"unpaired\": 50", unpaired), std::string::npos) << json;
}

TEST(ReportLossHeader, ABreakInTheSwitchChainIsBlamedOnTheKernelOnlyWithoutATaskFilter) {
  ScopedTempDir dir;
  model::SessionInfo session = LossySession();
  std::string unfiltered = Header(ReportOf(WriteGpunoiseTrace(dir.path(), session, true)));
  EXPECT_NE(unfiltered.find("  1 context switches the kernel never delivered\n"), std::string::npos) << unfiltered;

  session.switch_chain_checked = false;  // --pid or --cgroup: gaps by design
  std::string path = WriteGpunoiseTrace(dir.path(), session, true);
  std::string filtered = Header(ReportOf(path));
  EXPECT_NE(filtered.find("  switch chain not checked: task filter on\n"), std::string::npos) << filtered;
  EXPECT_EQ(filtered.find("never delivered"), std::string::npos) << filtered;
  std::string json = ReportOf(path, true);
  EXPECT_NE(json.find("\"switch_chain_checked\": false"), std::string::npos);
  EXPECT_NE(json.find("\"unseen_switches\": 0"), std::string::npos);
  EXPECT_NE(json.find("\"slices_trimmed\": 0"), std::string::npos);
}

TEST(ReportLossHeader, SoftirqsTheKernelNeverDeliveredAreNamedByVectorAndCpuNotCountedAsLost) {
  ScopedTempDir dir;
  model::SessionInfo session = LossySession();
  std::string unaudited = ReportOf(WriteGpunoiseTrace(dir.path(), session, false), true);
  EXPECT_NE(unaudited.find("\"unreported_softirqs\": null"), std::string::npos) << unaudited;

  session.softirqs_audited = true;
  session.cpus[1].unreported_softirqs[static_cast<size_t>(model::SoftirqVec::kNetRx)] = 5;
  session.cpus[0].unreported_softirqs[static_cast<size_t>(model::SoftirqVec::kRcu)] = 1;
  std::string path = WriteGpunoiseTrace(dir.path(), session, false);
  std::string report = ReportOf(path);
  std::string h = Header(report);
  EXPECT_NE(h.find("  lost events: 23 (source: gpunoise session summary)\n"), std::string::npos) << h;
  EXPECT_NE(h.find("  6 softirqs the kernel counted but never delivered to its tracepoint (NET_RX 5, RCU 1; "),
            std::string::npos)
      << h;
  EXPECT_NE(report.find("  softirqs the kernel never delivered to its tracepoint: CPU 0 RCU 1, CPU 1 NET_RX 5\n"),
            std::string::npos)
      << report;
  std::string json = ReportOf(path, true);
  size_t at = json.find("\"unreported_softirqs\": {");
  ASSERT_NE(at, std::string::npos) << json;
  EXPECT_EQ(json.find("\"NET_RX\": 5", at), json.find("\"NET_RX\"", at)) << json;
  EXPECT_EQ(json.find("\"RCU\": 1", at), json.find("\"RCU\"", at)) << json;
}

// What Perfetto's recorder writes during a UDP flood: per-CPU ftrace stats at
// the start and the end, the service's stats with failed patches, and a
// sequence whose writer lost packets.
std::string WriteTracedProbesTrace(const std::string& dir) {
  testing::TestTrace trace;
  perfetto::TracePacket packet;
  auto cpu_stats = [&](perfetto::FtraceStats::Phase phase, uint64_t overrun0, uint64_t dropped1) {
    packet.Clear();
    packet.set_trusted_packet_sequence_id(2);
    auto* stats = packet.mutable_ftrace_stats();
    stats->set_phase(phase);
    auto* c0 = stats->add_cpu_stats();
    c0->set_cpu(0);
    c0->set_overrun(overrun0);
    c0->set_read_events(1000);
    auto* c1 = stats->add_cpu_stats();
    c1->set_cpu(1);
    c1->set_dropped_events(dropped1);
    if (phase == perfetto::FtraceStats::START_OF_TRACE) stats->add_failed_ftrace_events("net/napi_gro_receive_entry");
    trace.Add(packet);
  };
  cpu_stats(perfetto::FtraceStats::START_OF_TRACE, 40, 0);
  for (auto& p : Switches(false)) {
    p.set_trusted_packet_sequence_id(2);
    trace.Add(p);
  }
  cpu_stats(perfetto::FtraceStats::END_OF_TRACE, 340, 25);
  // A track-event writer that lost packets twice after its first.
  for (uint32_t dropped : {1u, 0u, 1u, 0u, 65u}) {
    packet.Clear();
    packet.set_trusted_packet_sequence_id(9);
    packet.set_timestamp(kBase);
    if (dropped) packet.set_previous_packet_dropped(dropped);
    trace.Add(packet);
  }
  packet.Clear();
  auto* ts = packet.mutable_trace_stats();
  auto* buf = ts->add_buffer_stats();
  buf->set_buffer_size(64 << 20);
  buf->set_patches_failed(787);
  buf->set_chunks_overwritten(3);
  buf->set_bytes_overwritten(12288);
  ts->set_flushes_requested(2);
  ts->set_flushes_failed(1);
  trace.Add(packet);
  return trace.Write(dir, "traced_probes.pftrace");
}

TEST(ReportLossHeader, ATraceFromPerfettosRecorderReportsItsRingServiceAndPacketLoss) {
  ScopedTempDir dir;
  std::string path = WriteTracedProbesTrace(dir.path());
  std::string h = Header(ReportOf(path));
  // Not "the trace says nothing about lost events": END - START per CPU.
  EXPECT_NE(h.find("  lost events: 325 (source: ftrace_stats, END minus START per CPU; trace_stats; "
                   "previous_packet_dropped)\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("    kernel ring full: 325: CPU 0 300 (300 overwritten), CPU 1 25 (25 dropped with the ring full)\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("  the tracing service (traced) lost data: buffer 0: 787 patches failed (packets whose chunk was "
                   "gone before their size was patched in: lost or cut), 3 chunks overwritten before read "
                   "(12288 bytes); 1 flush of 2 failed (their data may be missing)\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("  packets lost before 2 packets on 1 sequence (previous_packet_dropped: their writer lost "
                   "packets)\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("  ftrace setup (never recorded, not lost): 1 event could not be enabled: "
                   "net/napi_gro_receive_entry\n"),
            std::string::npos)
      << h;

  std::string json = ReportOf(path, true);
  EXPECT_NE(json.find("\"total_lost\": 325"), std::string::npos) << json;
  EXPECT_NE(json.find("\"patches_failed\": 787"), std::string::npos);
  EXPECT_NE(json.find("\"overwritten\": 300"), std::string::npos);
  EXPECT_NE(json.find("\"dropped\": 25"), std::string::npos);
  EXPECT_NE(json.find("\"packets\": 2"), std::string::npos);
  EXPECT_NE(json.find("\"flushes_failed\": 1"), std::string::npos);
}

TEST(ReportLossHeader, ATraceWithoutAnyLossStatsSaysSo) {
  ScopedTempDir dir;
  testing::TestTrace trace;
  for (const auto& p : Switches(false)) trace.Add(p);
  std::string h = Header(ReportOf(trace.Write(dir.path(), "bare.pftrace")));
  EXPECT_NE(h.find("  lost events: 0 (source: none: the trace says nothing about lost events)\n"), std::string::npos)
      << h;
}

}  // namespace
}  // namespace gpunoise::report
