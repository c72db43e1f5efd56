// The recorder's packets, written with the project's codec, read back by
// libprotobuf's classes (parsed_packet.h): every field TrackEventWriter and
// the metadata writers set must come back with its value.
#include "export/perfetto/trace_packet_builder.h"

#include <gtest/gtest.h>

#include <string>

#include "export/perfetto/identity_packets.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/parsed_packet.h"
#include "export/perfetto/protos/perfetto_fields.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/track_event_writer.h"

namespace gpunoise::perfetto {
namespace {

TEST(TracePacketBuilder, MessagesLeftOpenAreClosedByBytes) {
  TracePacketBuilder packet;
  packet.w().Varint(pf::TracePacket::kTimestamp, 5);
  packet.Open(pf::TracePacket::kTrackDescriptor);
  packet.w().Varint(pf::TrackDescriptor::kUuid, 7);
  packet.Open(pf::TrackDescriptor::kProcess);
  // Past 127 bytes, so the one-byte length reserved for it must grow.
  std::string long_name(300, 'x');
  packet.w().Bytes(pf::ProcessDescriptor::kProcessName, long_name);
  TracePacket p = Parsed(packet);
  EXPECT_EQ(p.timestamp(), 5u);
  EXPECT_EQ(p.track_descriptor().uuid(), 7u);
  EXPECT_EQ(p.track_descriptor().process().process_name(), long_name);
  // Asking again changes nothing.
  EXPECT_EQ(Parsed(packet).SerializeAsString(), p.SerializeAsString());
}

TEST(TracePacketBuilder, InClosesTheMessagesOpenedAfterTheOneNamed) {
  TracePacketBuilder packet;
  packet.Open(pf::TracePacket::kTrackDescriptor);
  packet.w().Varint(pf::TrackDescriptor::kUuid, 9);
  packet.Open(pf::TrackDescriptor::kProcess);
  packet.w().Int(pf::ProcessDescriptor::kPid, 42);
  packet.In(pf::TracePacket::kTrackDescriptor).Int(pf::TrackDescriptor::kSiblingOrderRank, 3);
  TracePacket p = Parsed(packet);
  EXPECT_EQ(p.track_descriptor().process().pid(), 42);
  EXPECT_EQ(p.track_descriptor().sibling_order_rank(), 3);
  EXPECT_FALSE(p.track_descriptor().process().has_process_name());
}

TEST(TracePacketBuilder, ClearStartsANewPacket) {
  TracePacketBuilder packet;
  packet.Open(pf::TracePacket::kTrackEvent);
  packet.w().Varint(pf::TrackEvent::kTrackUuid, 1);
  packet.Clear();
  packet.w().Varint(pf::TracePacket::kTimestamp, 2);
  TracePacket p = Parsed(packet);
  EXPECT_FALSE(p.has_track_event());
  EXPECT_EQ(p.timestamp(), 2u);
}

TEST(TrackEventWriter, FirstPacketClearsTheSequenceAndLaterOnesDoNot) {
  TrackEventWriter writer(17, 0);
  TracePacketBuilder packet;
  writer.FillTrackDescriptor(&packet, 100, "first", 0, "what it is");
  TracePacket first = Parsed(packet);
  EXPECT_EQ(first.trusted_packet_sequence_id(), 17u);
  EXPECT_TRUE(first.first_packet_on_sequence());
  EXPECT_EQ(first.sequence_flags(), static_cast<uint32_t>(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED));
  EXPECT_FALSE(first.has_timestamp());
  EXPECT_EQ(first.track_descriptor().uuid(), 100u);
  EXPECT_EQ(first.track_descriptor().name(), "first");
  EXPECT_EQ(first.track_descriptor().description(), "what it is");
  EXPECT_FALSE(first.track_descriptor().has_parent_uuid());

  writer.FillTrackDescriptor(&packet, 101, "second", 100);
  TracePacket second = Parsed(packet);
  EXPECT_EQ(second.trusted_packet_sequence_id(), 17u);
  EXPECT_FALSE(second.has_first_packet_on_sequence());
  EXPECT_FALSE(second.has_sequence_flags());
  EXPECT_EQ(second.track_descriptor().parent_uuid(), 100u);
  EXPECT_FALSE(second.track_descriptor().has_description());
}

TEST(TrackEventWriter, ADefaultTrackIsDeclaredInTheFirstPacketAndItsEventsLeaveOutTheirUuid) {
  TrackEventWriter writer(1025, 0, 0xfeedfacecafebeefull);
  TracePacketBuilder packet;
  writer.FillCounter(&packet, 1000, 0xfeedfacecafebeefull, 2);
  TracePacket first = Parsed(packet);
  EXPECT_TRUE(first.first_packet_on_sequence());
  EXPECT_EQ(first.trace_packet_defaults().track_event_defaults().track_uuid(), 0xfeedfacecafebeefull);
  EXPECT_EQ(first.sequence_flags(), static_cast<uint32_t>(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED |
                                                          TracePacket::SEQ_NEEDS_INCREMENTAL_STATE));
  EXPECT_FALSE(first.track_event().has_track_uuid());
  EXPECT_EQ(first.track_event().double_counter_value(), 2);

  // Later events on the default track: no uuid, no defaults again, and they
  // say they need the sequence's state (the defaults are part of it).
  writer.FillCounter(&packet, 2000, 0xfeedfacecafebeefull, -1);
  TracePacket sample = Parsed(packet);
  EXPECT_FALSE(sample.has_trace_packet_defaults());
  EXPECT_FALSE(sample.track_event().has_track_uuid());
  EXPECT_EQ(sample.sequence_flags(), static_cast<uint32_t>(TracePacket::SEQ_NEEDS_INCREMENTAL_STATE));
  const size_t with_default = packet.bytes().size();

  writer.FillInternedSliceBegin(&packet, 3000, 0xfeedfacecafebeefull, "call_function_single", "irq");
  writer.FinishInterned(&packet);
  EXPECT_FALSE(Parsed(packet).track_event().has_track_uuid());
  writer.FillSliceEnd(&packet, 4000, 0xfeedfacecafebeefull);
  EXPECT_FALSE(Parsed(packet).track_event().has_track_uuid());

  // An event on another track names it, as on any sequence.
  writer.FillCounter(&packet, 5000, 42, 7);
  TracePacket other = Parsed(packet);
  EXPECT_EQ(other.track_event().track_uuid(), 42u);
  EXPECT_FALSE(other.has_sequence_flags());

  // The uuid's 10-byte varint and its tag, less the 2-byte flags field.
  TrackEventWriter plain(1025, 0);
  plain.FillCounter(&packet, 1000, 0xfeedfacecafebeefull, 2);
  plain.FillCounter(&packet, 2000, 0xfeedfacecafebeefull, -1);
  EXPECT_EQ(packet.bytes().size(), with_default + 11 - 2);
}

TEST(TrackEventWriter, InternedEventsDefineEachStringInThePacketOfItsFirstUseOnly) {
  TrackEventWriter writer(5, 0);
  TracePacketBuilder packet;
  EventRef e = writer.FillInternedSliceBegin(&packet, 1000, 42, "sched_ttwu_pending", "gpunoise.kwork");
  writer.AddInternedArg(e, "kind", "ipi_callback");
  writer.AddInternedArg(e, "cpu", uint64_t{3});
  writer.AddInternedArg(e, "tid", int64_t{-7});
  writer.FinishInterned(&packet);
  TracePacket first = Parsed(packet);
  // The first packet of the sequence clears the state and needs it.
  EXPECT_EQ(first.sequence_flags(), static_cast<uint32_t>(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED |
                                                          TracePacket::SEQ_NEEDS_INCREMENTAL_STATE));
  const TrackEvent& ev = first.track_event();
  EXPECT_EQ(ev.type(), TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(ev.track_uuid(), 42u);
  EXPECT_FALSE(ev.has_name());
  ASSERT_EQ(first.interned_data().event_names_size(), 1);
  EXPECT_EQ(first.interned_data().event_names(0).iid(), ev.name_iid());
  EXPECT_EQ(first.interned_data().event_names(0).name(), "sched_ttwu_pending");
  ASSERT_EQ(ev.category_iids_size(), 1);
  ASSERT_EQ(first.interned_data().event_categories_size(), 1);
  EXPECT_EQ(first.interned_data().event_categories(0).iid(), ev.category_iids(0));
  EXPECT_EQ(first.interned_data().event_categories(0).name(), "gpunoise.kwork");
  ASSERT_EQ(ev.debug_annotations_size(), 3);
  ASSERT_EQ(first.interned_data().debug_annotation_names_size(), 3);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(first.interned_data().debug_annotation_names(i).iid(), ev.debug_annotations(i).name_iid());
  EXPECT_EQ(first.interned_data().debug_annotation_names(0).name(), "kind");
  ASSERT_EQ(first.interned_data().debug_annotation_string_values_size(), 1);
  EXPECT_EQ(first.interned_data().debug_annotation_string_values(0).iid(), ev.debug_annotations(0).string_value_iid());
  EXPECT_EQ(first.interned_data().debug_annotation_string_values(0).str(), "ipi_callback");
  EXPECT_EQ(ev.debug_annotations(1).uint_value(), 3u);
  EXPECT_EQ(ev.debug_annotations(2).int_value(), -7);

  // The same strings again: the same iids, no definitions; a new one is
  // defined alone.
  e = writer.FillInternedInstant(&packet, 2000, 42, "sched_ttwu_pending", "gpunoise.kwork");
  writer.AddInternedArg(e, "kind", "ipi_send");
  writer.FinishInterned(&packet);
  TracePacket second = Parsed(packet);
  EXPECT_EQ(second.sequence_flags(), static_cast<uint32_t>(TracePacket::SEQ_NEEDS_INCREMENTAL_STATE));
  EXPECT_FALSE(second.has_first_packet_on_sequence());
  EXPECT_EQ(second.track_event().type(), TrackEvent::TYPE_INSTANT);
  EXPECT_EQ(second.track_event().name_iid(), ev.name_iid());
  EXPECT_EQ(second.track_event().category_iids(0), ev.category_iids(0));
  EXPECT_EQ(second.track_event().debug_annotations(0).name_iid(), ev.debug_annotations(0).name_iid());
  EXPECT_EQ(second.interned_data().event_names_size(), 0);
  EXPECT_EQ(second.interned_data().debug_annotation_names_size(), 0);
  ASSERT_EQ(second.interned_data().debug_annotation_string_values_size(), 1);
  EXPECT_EQ(second.interned_data().debug_annotation_string_values(0).str(), "ipi_send");
  EXPECT_NE(second.track_event().debug_annotations(0).string_value_iid(), ev.debug_annotations(0).string_value_iid());

  // Nothing new: no interned data at all.
  e = writer.FillInternedInstant(&packet, 3000, 42, "sched_ttwu_pending", "gpunoise.kwork");
  writer.FinishInterned(&packet);
  EXPECT_FALSE(Parsed(packet).has_interned_data());
}

TEST(TrackEventWriterDeathTest, AnInternedPacketNotFinishedAbortsTheNextFill) {
  TrackEventWriter writer(5, 0);
  TracePacketBuilder packet;
  writer.FillInternedInstant(&packet, 1000, 42, "x", "gpunoise.kwork");
  EXPECT_DEATH(writer.FillSliceEnd(&packet, 2000, 42), "");
}

TEST(TrackEventWriter, DescriptorsOfThreadsProcessesAndCounters) {
  TrackEventWriter writer(1, 0);
  TracePacketBuilder packet;
  writer.FillThreadTrackDescriptor(&packet, 5, 100, 101, "worker");
  TracePacket thread = Parsed(packet);
  EXPECT_EQ(thread.track_descriptor().uuid(), 5u);
  EXPECT_EQ(thread.track_descriptor().thread().pid(), 100);
  EXPECT_EQ(thread.track_descriptor().thread().tid(), 101);
  EXPECT_EQ(thread.track_descriptor().thread().thread_name(), "worker");
  EXPECT_FALSE(thread.track_descriptor().has_name());

  writer.FillProcessTrackDescriptor(&packet, 6, -1, {});
  TracePacket process = Parsed(packet);
  EXPECT_EQ(process.track_descriptor().process().pid(), -1);  // ten-byte negative int32, as protobuf writes it
  EXPECT_FALSE(process.track_descriptor().process().has_process_name());

  writer.FillCounterTrackDescriptor(&packet, 7, "rx bytes/s", TrackEventWriter::CounterUnit::kBytes, "B/s", 5);
  TracePacket counter = Parsed(packet);
  EXPECT_EQ(counter.track_descriptor().name(), "rx bytes/s");
  EXPECT_EQ(counter.track_descriptor().parent_uuid(), 5u);
  EXPECT_EQ(counter.track_descriptor().counter().unit(), CounterDescriptor::UNIT_SIZE_BYTES);
  EXPECT_EQ(counter.track_descriptor().counter().unit_name(), "B/s");

  writer.FillCounterTrackDescriptor(&packet, 8, "plain", TrackEventWriter::CounterUnit::kNone);
  TracePacket plain = Parsed(packet);
  EXPECT_TRUE(plain.track_descriptor().has_counter());
  EXPECT_FALSE(plain.track_descriptor().counter().has_unit());
}

// The trace processor takes a thread descriptor on a sequence with valid
// incremental state for the thread of the whole sequence (sequence_ids.h).
TEST(TrackEventWriter, AThreadTrackDescriptorGoesOnNoSequenceAndLeavesTheSequenceStartToTheNextPacket) {
  TrackEventWriter writer(3, 0);
  TracePacketBuilder packet;
  writer.FillThreadTrackDescriptor(&packet, 5, 100, 101, "worker");
  TracePacket thread = Parsed(packet);
  EXPECT_FALSE(thread.has_trusted_packet_sequence_id());
  EXPECT_FALSE(thread.has_sequence_flags());
  EXPECT_FALSE(thread.has_first_packet_on_sequence());
  EXPECT_EQ(thread.track_descriptor().thread().tid(), 101);

  writer.FillInstant(&packet, 1000, 5, "event");
  TracePacket first = Parsed(packet);
  EXPECT_EQ(first.trusted_packet_sequence_id(), 3u);
  EXPECT_TRUE(first.first_packet_on_sequence());
  EXPECT_EQ(first.sequence_flags(), static_cast<uint32_t>(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED));

  // Process and plain tracks stay on the sequence.
  writer.FillProcessTrackDescriptor(&packet, 6, 100, "proc");
  EXPECT_EQ(Parsed(packet).trusted_packet_sequence_id(), 3u);
}

TEST(TrackEventWriter, EventsCarryTheirTypeTrackNameCategoryAndArgsInOrder) {
  TrackEventWriter writer(1, 0);
  TracePacketBuilder packet;
  EventRef e = writer.FillSliceBegin(&packet, 1000, 9, "work", "cat");
  AddArg(e, "s", std::string_view("text"));
  AddArg(e, "c", "chars");
  AddArg(e, "i64", int64_t{-5});
  AddArg(e, "u64", uint64_t{1} << 40);
  AddArg(e, "i32", int32_t{-7});
  AddArg(e, "u32", uint32_t{7});
  AddArg(e, "d", 0.25);
  AddArg(e, "b", true);
  TracePacket p = Parsed(packet);
  EXPECT_EQ(p.timestamp(), 1000u);
  const TrackEvent& ev = p.track_event();
  EXPECT_EQ(ev.type(), TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(ev.track_uuid(), 9u);
  EXPECT_EQ(ev.name(), "work");
  ASSERT_EQ(ev.categories_size(), 1);
  EXPECT_EQ(ev.categories(0), "cat");
  ASSERT_EQ(ev.debug_annotations_size(), 8);
  const auto& a = ev.debug_annotations();
  EXPECT_EQ(a[0].name(), "s");
  EXPECT_EQ(a[0].string_value(), "text");
  EXPECT_EQ(a[1].string_value(), "chars");
  EXPECT_EQ(a[2].int_value(), -5);
  EXPECT_EQ(a[3].uint_value(), uint64_t{1} << 40);
  EXPECT_EQ(a[4].int_value(), -7);
  EXPECT_EQ(a[5].uint_value(), 7u);
  EXPECT_EQ(a[6].double_value(), 0.25);
  EXPECT_TRUE(a[7].has_bool_value() && a[7].bool_value());

  writer.FillSliceEnd(&packet, 2000, 9);
  TracePacket end = Parsed(packet);
  EXPECT_EQ(end.track_event().type(), TrackEvent::TYPE_SLICE_END);
  EXPECT_FALSE(end.track_event().has_name());
  EXPECT_EQ(end.track_event().categories_size(), 0);

  writer.FillInstant(&packet, 2500, 9, "now");
  EXPECT_EQ(Parsed(packet).track_event().type(), TrackEvent::TYPE_INSTANT);

  writer.FillCounter(&packet, 3000, 10, 1.5);
  TracePacket counter = Parsed(packet);
  EXPECT_EQ(counter.track_event().type(), TrackEvent::TYPE_COUNTER);
  EXPECT_EQ(counter.track_event().track_uuid(), 10u);
  EXPECT_EQ(counter.track_event().double_counter_value(), 1.5);
}

TEST(MetadataPackets, ClockSnapshotSystemInfoAndInterruptNames) {
  TracePacketBuilder packet;
  FillClockSnapshot(&packet, {1000, 900, 1700000000000000000ull, 880});
  TracePacket clocks = Parsed(packet);
  EXPECT_EQ(clocks.timestamp(), 1000u);
  ASSERT_EQ(clocks.clock_snapshot().clocks_size(), 4);
  EXPECT_EQ(clocks.clock_snapshot().clocks(0).clock_id(), static_cast<uint32_t>(BUILTIN_CLOCK_BOOTTIME));
  EXPECT_EQ(clocks.clock_snapshot().clocks(2).timestamp(), 1700000000000000000ull);
  EXPECT_EQ(clocks.clock_snapshot().clocks(3).clock_id(), static_cast<uint32_t>(BUILTIN_CLOCK_MONOTONIC_RAW));
  EXPECT_EQ(clocks.clock_snapshot().primary_trace_clock(), BUILTIN_CLOCK_BOOTTIME);

  model::HostInfo host;
  host.sysname = "Linux";
  host.release = "6.18";
  host.machine = "x86_64";
  host.machine_name = "node-a";
  host.num_cpus = 2;
  host.timezone_off_mins = -300;
  FillSystemInfo(&packet, host, "gpunoise 1");
  TracePacket info = Parsed(packet);
  EXPECT_EQ(info.system_info().utsname().sysname(), "Linux");
  EXPECT_EQ(info.system_info().utsname().release(), "6.18");
  EXPECT_TRUE(info.system_info().utsname().has_version());
  EXPECT_EQ(info.system_info().tracing_service_version(), "gpunoise 1");
  EXPECT_EQ(info.system_info().machine_name(), "node-a");
  EXPECT_EQ(info.system_info().num_cpus(), 2u);
  EXPECT_FALSE(info.system_info().has_page_size());
  EXPECT_EQ(info.system_info().timezone_off_mins(), -300);

  model::IrqTable irqs;
  irqs[24].name = "eth0-rx-0";
  irqs[25].name = "";  // unnamed: left out
  FillInterruptInfo(&packet, irqs);
  TracePacket names = Parsed(packet);
  ASSERT_EQ(names.interrupt_info().irq_mapping_size(), 1);
  EXPECT_EQ(names.interrupt_info().irq_mapping(0).irq_id(), 24u);
  EXPECT_EQ(names.interrupt_info().irq_mapping(0).name(), "eth0-rx-0");
}

TEST(MetadataPackets, ProcessTreeKeepsCommandLinesAndNamespacePidsInOrder) {
  model::ProcessSnapshot snapshot;
  snapshot.ts = 77;
  model::ProcessInfo trainer;
  trainer.pid = 100;
  trainer.ppid = 1;
  trainer.uid = 0;
  trainer.cmdline = {"python3", "train.py", "--steps=10"};
  trainer.identity.nspid = {100, 7};
  snapshot.processes.push_back(trainer);
  model::ProcessInfo kthread;
  kthread.pid = 2;
  kthread.comm = "kthreadd";
  kthread.is_kthread = true;
  kthread.uid = -1;
  snapshot.processes.push_back(kthread);
  snapshot.threads.push_back({101, 100, "loader"});
  snapshot.threads.back().nstid = {101, 8};
  TracePacketBuilder packet;
  FillProcessTree(&packet, snapshot);
  TracePacket p = Parsed(packet);
  EXPECT_EQ(p.timestamp(), 77u);
  ASSERT_EQ(p.process_tree().processes_size(), 2);
  const auto& t = p.process_tree().processes(0);
  EXPECT_EQ(t.pid(), 100);
  EXPECT_EQ(t.ppid(), 1);
  EXPECT_EQ(t.uid(), 0);
  ASSERT_EQ(t.cmdline_size(), 3);
  EXPECT_EQ(t.cmdline(2), "--steps=10");
  ASSERT_EQ(t.nspid_size(), 2);
  EXPECT_EQ(t.nspid(1), 7);
  const auto& k = p.process_tree().processes(1);
  EXPECT_TRUE(k.is_kthread());
  EXPECT_TRUE(k.cmdline_is_comm());
  EXPECT_EQ(k.cmdline(0), "kthreadd");
  EXPECT_FALSE(k.has_uid());
  ASSERT_EQ(p.process_tree().threads_size(), 1);
  EXPECT_EQ(p.process_tree().threads(0).tgid(), 100);
  EXPECT_EQ(p.process_tree().threads(0).name(), "loader");
  EXPECT_EQ(p.process_tree().threads(0).nstid(1), 8);
  EXPECT_EQ(p.process_tree().collection_end_timestamp(), 77u);
}

TEST(MetadataPackets, FtraceStatsPutRingLossInDroppedEvents) {
  model::SessionInfo session;
  session.start_ts = 10;
  session.end_ts = 2'000'000'010;
  model::CpuLoss cpu;
  cpu.cpu = 1;
  cpu.events = 500;
  cpu.lost = 3;
  session.cpus.push_back(cpu);
  model::CollectorReport collector;
  collector.missing_events = {"net/napi_poll"};
  session.collectors.push_back(collector);
  TracePacketBuilder packet;
  FillFtraceStats(&packet, StatsPhase::kEnd, session);
  TracePacket p = Parsed(packet);
  EXPECT_EQ(p.timestamp(), session.end_ts);
  EXPECT_EQ(p.ftrace_stats().phase(), FtraceStats::END_OF_TRACE);
  ASSERT_EQ(p.ftrace_stats().cpu_stats_size(), 1);
  const FtraceCpuStats& c = p.ftrace_stats().cpu_stats(0);
  EXPECT_EQ(c.cpu(), 1u);
  EXPECT_TRUE(c.has_overrun() && c.has_entries() && c.has_commit_overrun() && c.has_bytes_read());
  EXPECT_EQ(c.read_events(), 500u);
  EXPECT_EQ(c.dropped_events(), 3u);
  EXPECT_DOUBLE_EQ(c.now_ts(), 2.00000001);
  ASSERT_EQ(p.ftrace_stats().failed_ftrace_events_size(), 1);
  EXPECT_EQ(p.ftrace_stats().failed_ftrace_events(0), "net/napi_poll");
}

}  // namespace
}  // namespace gpunoise::perfetto
