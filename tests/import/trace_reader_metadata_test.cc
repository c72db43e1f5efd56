// The trace reader on track events, the session summary and the network
// collectors' generic events.
#include "import/trace_reader.h"

#include <gtest/gtest.h>

#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"
#include "import/session_summary_reader.h"
#include "import/test_trace.h"
#include "import/trace_reader_test_support.h"

namespace gpunoise::import {
namespace {

using testing::ScopedTempDir;
using testing::Wire;
using namespace reader_test;

TEST(TraceReader, DecodesTrackEventsWithInternedNamesAndDefaultTracks) {
  TestTrace trace;
  perfetto::TracePacket desc;
  desc.set_trusted_packet_sequence_id(5);
  auto* d = desc.mutable_track_descriptor();
  d->set_uuid(77);
  d->set_name("GPU 0 (H200) stream 7");
  trace.Add(desc);

  // Interned name, and a default track set by TracePacketDefaults (59.11.11).
  std::string defaults = Wire().Bytes(11, Wire().Varint(11, 77).str()).str();
  std::string interned = Wire().Bytes(2, Wire().Varint(1, 1).Bytes(2, "gemm_kernel").str()).str();
  std::string event = Wire().Varint(9, 1).Varint(10, 1).Bytes(4, Wire().Bytes(10, "correlation_id").Varint(3, 42).str()).str();
  trace.AddSerialized(
      Wire().Varint(8, 1000).Varint(10, 5).Varint(13, 1).Bytes(12, interned).Bytes(59, defaults).Bytes(11, event).str());
  trace.AddSerialized(Wire().Varint(8, 2000).Varint(10, 5).Bytes(11, Wire().Varint(9, 2).str()).str());

  RecordingSink sink;
  auto stats = ReadBytes(trace.bytes(), sink);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  ASSERT_EQ(sink.tracks.size(), 1u);
  EXPECT_EQ(sink.tracks[0].name, "GPU 0 (H200) stream 7");
  ASSERT_EQ(sink.track_events.size(), 2u);
  EXPECT_EQ(sink.track_event_names[0], "gemm_kernel");
  EXPECT_EQ(sink.track_events[0].track_uuid, 77u);
  EXPECT_EQ(sink.track_events[0].ts, 1000u);
  EXPECT_EQ(sink.track_events[0].type, model::TrackEventType::kSliceBegin);
  ASSERT_NE(sink.track_events[0].FindArg("correlation_id"), nullptr);
  EXPECT_EQ(sink.track_events[0].FindArg("correlation_id")->uint_value, 42u);
  EXPECT_EQ(sink.track_events[1].type, model::TrackEventType::kSliceEnd);
  EXPECT_EQ(sink.track_events[1].track_uuid, 77u);
  EXPECT_EQ(stats->max_sequence_id, 5u);
}

// Writes `session` as the recorder's session summary, reads the file back
// and parses the summary it finds (the round trip the report makes).
void RoundTripSessionSummary(const model::SessionInfo& session, model::SessionInfo* back) {
  ScopedTempDir dir;
  std::string path = dir.path() + "/s.pftrace";
  auto writer = perfetto::TraceFileWriter::Create(path, 0);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  perfetto::TrackEventWriter track_events(1, 99);
  ASSERT_TRUE(perfetto::WriteSessionSummary(track_events, session, *writer).ok());
  ASSERT_TRUE(writer->Commit().ok());

  RecordingSink sink;
  TraceReader reader(sink);
  ASSERT_TRUE(reader.ReadFile(path).ok());
  const model::TrackEventRecord* summary = nullptr;
  for (size_t i = 0; i < sink.track_events.size(); ++i)
    if (sink.track_event_names[i] == kSessionEventName) summary = &sink.track_events[i];
  ASSERT_NE(summary, nullptr);
  model::TrackEventRecord copy = *summary;
  copy.name = kSessionEventName;
  ASSERT_TRUE(IsSessionSummary(copy));
  *back = ParseSessionSummary(copy);
}

TEST(TraceReader, ReadsGpunoiseSessionSummaryBack) {
  model::SessionInfo session;
  session.tool_version = "0.1.0";
  session.hostname = "node17";
  session.start_ts = 100;
  session.end_ts = 900;
  session.end_reason = "duration";
  model::CollectorReport sched;
  sched.name = "sched";
  sched.state = model::CollectorState::kDegraded;
  sched.missing_events = {"sched/sched_migrate_task", "task/task_rename"};
  sched.events = 1234;
  sched.lost = 5;
  session.collectors.push_back(sched);
  session.cpus.push_back({.cpu = 0, .events = 1000, .lost = 3, .bytes = 4096,
                          .lost_by_kind = {{"sched_switch", 2}, {"sched_waking", 1}},
                          .decode_errors = 1, .unwritten = 7, .unseen_switches = 2});
  session.cpus.push_back({.cpu = 1, .events = 2000, .lost = 0, .bytes = 8192});
  session.cpus[1].unreported_softirqs[static_cast<size_t>(model::SoftirqVec::kNetRx)] = 5;
  session.cpus[1].unreported_softirqs[static_cast<size_t>(model::SoftirqVec::kRcu)] = 1;
  session.softirqs_audited = true;
  session.program_misses.push_back({"sched", "gn_sched_switch", 4});
  session.map_losses.push_back({"sampler", "gn_samples", 9});
  session.map_losses.push_back({"kwork", "gn_kw_log", 5, model::MapLossKind::kOverwritten});
  session.map_losses.push_back({"kwork", "gn_kw_open", 50, model::MapLossKind::kUnpaired});
  session.records_outside_cpus = 6;
  session.switch_chain_checked = false;
  session.unread_before_loss_ns = 142'000'000;
  session.unread_before_loss_from = 1'300'000'000;
  session.first_ring_loss_seen = 1'450'000'000;
  session.drain_yielded = true;
  session.drain_idle_from = 1'200'000'000;
  session.drain_raises = 3;
  session.drain_raised_for_late = 1;
  session.drain_raised_for_doorbell = 2;
  session.drain_raised_ns = 2'500'000'000;

  model::SessionInfo back;
  RoundTripSessionSummary(session, &back);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(back.hostname, "node17");
  EXPECT_EQ(back.end_reason, "duration");
  ASSERT_EQ(back.collectors.size(), 1u);
  EXPECT_EQ(back.collectors[0].state, model::CollectorState::kDegraded);
  EXPECT_EQ(back.collectors[0].missing_events.size(), 2u);
  EXPECT_EQ(back.collectors[0].events, 1234u);
  ASSERT_EQ(back.cpus.size(), 2u);
  EXPECT_EQ(back.cpus[0].lost, 3u);
  EXPECT_EQ(back.cpus[0].unseen_switches, 2u);
  EXPECT_EQ(back.cpus[0].lost_by_kind, session.cpus[0].lost_by_kind);
  EXPECT_EQ(back.cpus[0].decode_errors, 1u);
  EXPECT_EQ(back.cpus[0].unwritten, 7u);
  EXPECT_EQ(back.cpus[1].events, 2000u);
  EXPECT_TRUE(back.softirqs_audited);
  EXPECT_EQ(back.cpus[1].unreported_softirqs, session.cpus[1].unreported_softirqs);
  EXPECT_EQ(back.cpus[0].unreported_softirqs, model::SoftirqCounts{});
  ASSERT_EQ(back.program_misses.size(), 1u);
  EXPECT_EQ(back.program_misses[0].collector, "sched");
  EXPECT_EQ(back.program_misses[0].program, "gn_sched_switch");
  EXPECT_EQ(back.program_misses[0].missed, 4u);
  ASSERT_EQ(back.map_losses.size(), 3u);
  EXPECT_EQ(back.map_losses[0].map, "gn_samples");
  EXPECT_EQ(back.map_losses[0].count, 9u);
  EXPECT_EQ(back.map_losses[0].kind, model::MapLossKind::kFull);
  EXPECT_EQ(back.map_losses[1].map, "gn_kw_log");
  EXPECT_EQ(back.map_losses[1].kind, model::MapLossKind::kOverwritten);
  EXPECT_EQ(back.map_losses[2].count, 50u);
  EXPECT_EQ(back.map_losses[2].kind, model::MapLossKind::kUnpaired);
  EXPECT_EQ(back.records_outside_cpus, 6u);
  EXPECT_FALSE(back.switch_chain_checked);
  EXPECT_EQ(back.unread_before_loss_ns, 142'000'000u);
  EXPECT_EQ(back.unread_before_loss_from, 1'300'000'000u);
  EXPECT_EQ(back.first_ring_loss_seen, 1'450'000'000u);
  EXPECT_TRUE(back.drain_yielded);
  EXPECT_EQ(back.drain_idle_from, 1'200'000'000u);
  EXPECT_EQ(back.drain_raises, 3u);
  EXPECT_EQ(back.drain_raised_for_late, 1u);
  EXPECT_EQ(back.drain_raised_for_doorbell, 2u);
  EXPECT_EQ(back.drain_raised_ns, 2'500'000'000u);
  EXPECT_EQ(model::TotalKernelAndUserLoss(back), model::TotalKernelAndUserLoss(session));
}

TEST(TraceReader, ReadsTheMachineAndItsClockDisciplineBackFromTheSessionSummary) {
  model::SessionInfo session;
  session.hostname = "vm";
  session.boot_id = "1997841b-5fee-47f0-ad16-60f5772d6f21";
  session.machine_name = "node1";
  session.start_ts = 100;
  session.clock_start = {.read = true, .synced = true, .maxerror_us = 1500, .esterror_us = 20,
                         .offset_ns = -3200, .daemons = {"chronyd", "phc2sys"},
                         .ptp_clocks = {"ptp0 (mlx5_ptp)", "ptp1 (kvm-ptp)"}};
  session.clock_end = {.read = true, .synced = false, .maxerror_us = 16000000, .esterror_us = 16000000};

  model::SessionInfo back;
  RoundTripSessionSummary(session, &back);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(back.boot_id, session.boot_id);
  EXPECT_EQ(back.machine_name, "node1");
  EXPECT_TRUE(back.clock_start.read);
  EXPECT_TRUE(back.clock_start.synced);
  EXPECT_EQ(back.clock_start.maxerror_us, 1500);
  EXPECT_EQ(back.clock_start.esterror_us, 20);
  EXPECT_EQ(back.clock_start.offset_ns, -3200);
  EXPECT_EQ(back.clock_start.daemons, session.clock_start.daemons);
  EXPECT_EQ(back.clock_start.ptp_clocks, session.clock_start.ptp_clocks);
  EXPECT_TRUE(back.clock_end.read);
  EXPECT_FALSE(back.clock_end.synced);
  EXPECT_EQ(back.clock_end.maxerror_us, 16000000);
  EXPECT_TRUE(back.clock_end.daemons.empty());
}

TEST(TraceReader, ReadsNetworkCollectorGenericEvents) {
  perfetto::TracePacket packet;
  auto* bundle = packet.mutable_ftrace_events();
  bundle->set_cpu(1);
  auto* e = bundle->add_event();
  e->set_timestamp(10);
  auto* g = e->mutable_generic();
  g->set_event_name("napi_poll");
  auto field = [&](perfetto::GenericFtraceEvent* ge, const char* name) {
    auto* f = ge->add_field();
    f->set_name(name);
    return f;
  };
  field(g, "dev_name")->set_str_value("eth0");
  field(g, "work")->set_int_value(64);
  field(g, "budget")->set_int_value(64);
  field(g, "queue")->set_int_value(3);
  auto* e2 = bundle->add_event();
  e2->set_timestamp(20);
  auto* g2 = e2->mutable_generic();
  g2->set_event_name("net_dev_xmit_timeout");
  field(g2, "name")->set_str_value("eth1");
  field(g2, "driver")->set_str_value("mlx5_core");
  field(g2, "queue_index")->set_int_value(5);
  auto* e3 = bundle->add_event();
  e3->set_timestamp(30);
  auto* rx = e3->mutable_netif_receive_skb();
  rx->set_name("eth0");
  rx->set_len(1500);
  TestTrace trace;
  trace.Add(packet);
  RecordingSink sink;
  auto stats = ReadBytes(trace.bytes(), sink);
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(sink.net.size(), 3u);
  EXPECT_EQ(sink.net[0].event.kind, model::NetTraceKind::kNapiPoll);
  EXPECT_EQ(sink.net[0].device, "eth0");
  EXPECT_EQ(sink.net[0].event.value, 64);
  EXPECT_EQ(sink.net[0].event.budget, 64);
  EXPECT_EQ(sink.net[0].event.queue, 3);
  EXPECT_EQ(sink.net[0].event.cpu, 1u);
  EXPECT_EQ(sink.net[1].event.kind, model::NetTraceKind::kTxTimeout);
  EXPECT_EQ(sink.net[1].device, "eth1");
  EXPECT_EQ(sink.net[1].event.queue, 5);
  EXPECT_EQ(sink.net[2].event.kind, model::NetTraceKind::kRxPacket);
  EXPECT_EQ(sink.net[2].event.value, 1500);
}

}  // namespace
}  // namespace gpunoise::import
