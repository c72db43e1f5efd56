// What a trace says of its own losses in Perfetto's fields: FtraceStats read
// the trace processor's way (END - START per CPU), the service's TraceStats,
// and previous_packet_dropped.
#include <gtest/gtest.h>

#include "export/perfetto/metadata_packets.h"
#include "import/test_trace.h"
#include "import/trace_reader.h"
#include "export/perfetto/parsed_packet.h"

namespace gpunoise::import {
namespace {

using testing::RecordingSink;
using testing::TestTrace;

struct Counters {
  uint64_t entries, overrun, commit_overrun, bytes, dropped, read;
};

perfetto::TracePacket CpuStats(perfetto::FtraceStats::Phase phase, const std::vector<Counters>& cpus) {
  perfetto::TracePacket packet;
  auto* stats = packet.mutable_ftrace_stats();
  stats->set_phase(phase);
  for (size_t i = 0; i < cpus.size(); ++i) {
    auto* c = stats->add_cpu_stats();
    c->set_cpu(i);
    c->set_entries(cpus[i].entries);
    c->set_overrun(cpus[i].overrun);
    c->set_commit_overrun(cpus[i].commit_overrun);
    c->set_bytes_read(cpus[i].bytes);
    c->set_dropped_events(cpus[i].dropped);
    c->set_read_events(cpus[i].read);
    c->set_now_ts(phase == perfetto::FtraceStats::START_OF_TRACE ? 10.0 : 20.0);
    c->set_oldest_event_ts(9.5);
  }
  return packet;
}

RecordingSink Read(const TestTrace& trace) {
  RecordingSink sink;
  TraceReader reader(sink);
  auto stats = reader.ReadBuffer({reinterpret_cast<const uint8_t*>(trace.bytes().data()), trace.bytes().size()});
  EXPECT_TRUE(stats.ok()) << stats.error().message;
  return sink;
}

TEST(LossStatsReader, FtraceCpuStatsAreEndMinusStartForEveryField) {
  TestTrace trace;
  // A traced_probes trace: the kernel's counters do not start at 0.
  perfetto::TracePacket start = CpuStats(perfetto::FtraceStats::START_OF_TRACE,
                                         {{10, 100, 1, 4096, 5, 1000}, {0, 0, 0, 0, 0, 0}});
  start.mutable_ftrace_stats()->add_failed_ftrace_events("irq/irq_handler_entry");
  start.mutable_ftrace_stats()->add_unknown_ftrace_events("vendor/thing");
  trace.Add(start);
  perfetto::TracePacket end = CpuStats(perfetto::FtraceStats::END_OF_TRACE,
                                       {{4, 150, 3, 1024, 25, 5000}, {2, 7, 0, 512, 0, 300}});
  end.mutable_ftrace_stats()->add_ftrace_parse_errors(perfetto::FTRACE_STATUS_ABI_END_OVERFLOW);
  end.mutable_ftrace_stats()->mutable_kprobe_stats()->set_misses(4);
  trace.Add(end);
  RecordingSink sink = Read(trace);
  ASSERT_EQ(sink.ftrace_stats.size(), 1u);  // START is held until its END
  const model::FtraceStatsSummary& s = sink.ftrace_stats[0];
  ASSERT_EQ(s.cpus.size(), 2u);
  const model::FtraceCpuDelta& c0 = s.cpus[0];
  EXPECT_TRUE(c0.has_start);
  EXPECT_EQ(c0.overrun, 50u);
  EXPECT_EQ(c0.commit_overrun, 2u);
  EXPECT_EQ(c0.dropped_events, 20u);
  EXPECT_EQ(c0.read_events, 4000u);
  EXPECT_EQ(c0.entries, -6);
  EXPECT_EQ(c0.bytes, -3072);
  EXPECT_EQ(c0.lost(), 72u);  // the kernel counts the three causes apart: they add
  EXPECT_EQ(s.cpus[1].lost(), 7u);
  EXPECT_EQ(s.failed_events, std::vector<std::string>{"irq/irq_handler_entry"});
  EXPECT_EQ(s.unknown_events, std::vector<std::string>{"vendor/thing"});
  EXPECT_EQ(s.parse_errors, std::vector<uint32_t>{perfetto::FTRACE_STATUS_ABI_END_OVERFLOW});
  EXPECT_TRUE(s.has_kprobe_stats);
  EXPECT_EQ(s.kprobe_misses, 4);
}

TEST(LossStatsReader, AnEndWithoutAStartStandsForTheWholeTrace) {
  TestTrace trace;
  trace.Add(CpuStats(perfetto::FtraceStats::END_OF_TRACE, {{0, 9, 0, 0, 1, 50}}));
  RecordingSink sink = Read(trace);
  ASSERT_EQ(sink.ftrace_stats.size(), 1u);
  EXPECT_FALSE(sink.ftrace_stats[0].cpus[0].has_start);
  EXPECT_EQ(sink.ftrace_stats[0].cpus[0].lost(), 10u);
}

TEST(LossStatsReader, GpunoiseWritesARingFullLossAsDroppedEventsOnly) {
  model::SessionInfo session;
  session.start_ts = 1'000'000'000;
  session.end_ts = 2'000'000'000;
  model::CpuLoss cpu;
  cpu.cpu = 3;
  cpu.events = 900;
  cpu.bytes = 64000;
  cpu.lost = 7;
  session.cpus.push_back(cpu);
  TestTrace trace;
  perfetto::TracePacket packet;
  perfetto::TracePacketBuilder built;
  perfetto::FillFtraceStats(&built, perfetto::StatsPhase::kStart, session);
  packet = perfetto::Parsed(built);
  trace.Add(packet);
  perfetto::FillFtraceStats(&built, perfetto::StatsPhase::kEnd, session);
  packet = perfetto::Parsed(built);
  const perfetto::FtraceCpuStats& end = packet.ftrace_stats().cpu_stats(0);
  // A failed reserve loses the new record: no-overwrite loss, never overrun.
  EXPECT_EQ(end.dropped_events(), 7u);
  EXPECT_EQ(end.overrun(), 0u);
  EXPECT_EQ(end.bytes_read(), 0u);  // what is left in the ring: the final drain empties it
  trace.Add(packet);
  RecordingSink sink = Read(trace);
  ASSERT_EQ(sink.ftrace_stats.size(), 1u);
  ASSERT_EQ(sink.ftrace_stats[0].cpus.size(), 1u);
  EXPECT_EQ(sink.ftrace_stats[0].cpus[0].cpu, 3u);
  EXPECT_EQ(sink.ftrace_stats[0].cpus[0].lost(), 7u);  // counted once
  EXPECT_EQ(sink.ftrace_stats[0].cpus[0].read_events, 900u);
}

TEST(LossStatsReader, TraceStatsGiveEachBufferItsLossAndTheServiceItsFlushes) {
  TestTrace trace;
  perfetto::TracePacket packet;
  auto* stats = packet.mutable_trace_stats();
  auto* b0 = stats->add_buffer_stats();
  b0->set_buffer_size(64 << 20);
  b0->set_patches_failed(787);
  b0->set_chunks_overwritten(12);
  b0->set_bytes_overwritten(49152);
  b0->set_trace_writer_packet_loss(2);
  auto* b1 = stats->add_buffer_stats();
  b1->set_chunks_discarded(5);
  b1->set_abi_violations(1);
  stats->set_flushes_requested(4);
  stats->set_flushes_failed(1);
  stats->set_final_flush_outcome(perfetto::TraceStats::FINAL_FLUSH_FAILED);
  stats->set_patches_discarded(3);
  trace.Add(packet);
  RecordingSink sink = Read(trace);
  ASSERT_EQ(sink.trace_stats.size(), 1u);
  const model::TraceServiceStats& s = sink.trace_stats[0];
  ASSERT_EQ(s.buffers.size(), 2u);
  EXPECT_EQ(s.buffers[0].index, 0u);
  EXPECT_EQ(s.buffers[0].patches_failed, 787u);
  EXPECT_EQ(s.buffers[0].chunks_overwritten, 12u);
  EXPECT_EQ(s.buffers[0].bytes_overwritten, 49152u);
  EXPECT_EQ(s.buffers[0].trace_writer_packet_loss, 2u);
  EXPECT_EQ(s.buffers[1].index, 1u);
  EXPECT_EQ(s.buffers[1].chunks_discarded, 5u);
  EXPECT_EQ(s.buffers[1].abi_violations, 1u);
  EXPECT_EQ(s.flushes_failed, 1u);
  EXPECT_TRUE(s.final_flush_failed);
  EXPECT_EQ(s.patches_discarded, 3u);
}

TEST(LossStatsReader, PreviousPacketDroppedCountsOnlyAfterASequencesFirstPacket) {
  TestTrace trace;
  auto add = [&](uint32_t seq, uint32_t dropped) {
    perfetto::TracePacket p;
    p.set_trusted_packet_sequence_id(seq);
    p.set_timestamp(1000);
    if (dropped) p.set_previous_packet_dropped(dropped);
    trace.Add(p);
  };
  add(5, 1);  // the service flags every sequence's first packet: not a loss
  add(5, 0);
  add(5, 1 | 64);  // DATA_LOSS_PRESENT | DATA_LOSS_OVERWRITE
  add(6, 1);
  add(6, 1);
  RecordingSink sink = Read(trace);
  ASSERT_EQ(sink.packet_losses.size(), 2u);
  EXPECT_EQ(sink.packet_losses[0], std::make_pair(5u, 65u));
  EXPECT_EQ(sink.packet_losses[1], std::make_pair(6u, 1u));
}

}  // namespace
}  // namespace gpunoise::import
