#include "import/trace_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/track_event_writer.h"
#include "import/session_summary_reader.h"
#include "import/test_trace.h"

namespace gpunoise::import {
namespace {

using testing::RecordingSink;
using testing::ScopedTempDir;
using testing::TestTrace;
using testing::Wire;

class FixedIrqNames : public perfetto::IrqNameSource {
 public:
  std::string_view IrqName(int32_t irq) override { return irq == 30 ? "eth0-TxRx-0" : "other"; }
};

model::Event Switch(uint64_t ts, uint32_t cpu, int32_t prev, int32_t next, int64_t state, const char* comm) {
  model::SchedSwitch s;
  s.prev_tid = prev;
  s.prev_state = state;
  s.next_tid = next;
  s.next_comm = model::TaskComm(comm);
  return {ts, cpu, prev, s};
}

model::Event Waking(uint64_t ts, uint32_t cpu, int32_t waker, int32_t tid, int32_t target) {
  model::SchedWaking w;
  w.tid = tid;
  w.target_cpu = target;
  w.comm = model::TaskComm("wakee");
  return {ts, cpu, waker, w};
}

template <typename P>
model::Event Ev(uint64_t ts, uint32_t cpu, int32_t tid, P payload) {
  return {ts, cpu, tid, payload};
}

// One gpunoise bundle per call, as the recorder writes it.
void AddGpunoiseBundle(TestTrace& trace, uint32_t cpu, const std::vector<model::Event>& events, bool lost = false,
                       uint64_t previous_end = 0) {
  perfetto::FtraceBundleEncoder encoder;
  FixedIrqNames names;
  perfetto::TracePacket packet;
  encoder.Encode({cpu, lost, previous_end}, events, names, &packet);
  trace.Add(packet);
}

Result<ReadStats> ReadBytes(const std::string& bytes, RecordingSink& sink, ReadOptions options = {}) {
  TraceReader reader(sink, options);
  return reader.ReadBuffer({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

TEST(TraceReader, ReadsGpunoiseBundlesInTimeOrderWithPrevInferredPerCpu) {
  TestTrace trace;
  AddGpunoiseBundle(trace, 0,
                    {Switch(100, 0, 0, 10, 0, "a"), Waking(150, 0, 10, 11, 1),
                     Ev(200, 0, 10, model::IrqEntry{30}), Ev(210, 0, 10, model::IrqExit{30, 1}),
                     Ev(220, 0, 10, model::SoftirqEntry{3}), Ev(260, 0, 10, model::SoftirqExit{3}),
                     Switch(300, 0, 10, 12, 1, "b")});
  AddGpunoiseBundle(trace, 1, {Switch(120, 1, 0, 11, 0, "wakee")});
  AddGpunoiseBundle(trace, 0, {Switch(400, 0, 12, 0, 256, "swapper/0")});
  RecordingSink sink;
  auto stats = ReadBytes(trace.bytes(), sink);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(stats->packets, 3u);
  EXPECT_EQ(stats->events, 9u);
  EXPECT_EQ(stats->first_ts, 100u);
  EXPECT_EQ(stats->last_ts, 400u);

  std::vector<model::Event> cpu0;
  for (const auto& e : sink.events)
    if (e.cpu == 0) cpu0.push_back(e);
  ASSERT_EQ(cpu0.size(), 8u);
  for (size_t i = 1; i < cpu0.size(); ++i) EXPECT_LE(cpu0[i - 1].ts, cpu0[i].ts);
  // Compact sched has no prev_pid: the first switch on a CPU has none, the
  // others take the previous switch's next, across bundles too.
  auto sw = [](const model::Event& e) { return std::get<model::SchedSwitch>(e.payload); };
  EXPECT_EQ(sw(cpu0[0]).prev_tid, -1);
  EXPECT_EQ(sw(cpu0[0]).next_tid, 10);
  EXPECT_EQ(sw(cpu0[0]).next_comm.view(), "a");
  EXPECT_EQ(std::get<model::SchedWaking>(cpu0[1].payload).tid, 11);
  EXPECT_EQ(cpu0[1].tid, 10) << "the waker is the task current on the CPU";
  EXPECT_EQ(std::get<model::IrqEntry>(cpu0[2].payload).irq, 30);
  EXPECT_EQ(std::get<model::SoftirqExit>(cpu0[5].payload).vec, 3u);
  EXPECT_EQ(sw(cpu0[6]).prev_tid, 10);
  EXPECT_EQ(sw(cpu0[6]).prev_state, 1);
  EXPECT_EQ(sw(cpu0[7]).prev_tid, 12);
  EXPECT_EQ(sw(cpu0[7]).prev_state, 256);
  EXPECT_EQ(cpu0[7].tid, 12);
}

TEST(TraceReader, LostEventsForgetTheCurrentTaskAndReportTheGap) {
  TestTrace trace;
  AddGpunoiseBundle(trace, 0, {Switch(100, 0, 0, 10, 0, "a")});
  AddGpunoiseBundle(trace, 0, {Switch(500, 0, 77, 12, 0, "b")}, /*lost=*/true, /*previous_end=*/100);
  RecordingSink sink;
  ASSERT_TRUE(ReadBytes(trace.bytes(), sink).ok());
  ASSERT_EQ(sink.losses.size(), 1u);
  EXPECT_EQ(sink.losses[0].cpu, 0u);
  EXPECT_EQ(sink.losses[0].from, 100u);
  EXPECT_EQ(sink.losses[0].to, 500u);
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(std::get<model::SchedSwitch>(sink.events[1].payload).prev_tid, -1)
      << "after a loss the task that was switched out is unknown";
}

// Perfetto's recorder without compact sched: FtraceEvent.sched_switch in
// full form, with prev_pid, inside ftrace bundles, plus irq and softirq
// events carrying the IRQ's name.
TEST(TraceReader, ReadsPerfettoRecorderFullFormatSchedSwitch) {
  TestTrace trace;
  perfetto::TracePacket packet;
  auto* bundle = packet.mutable_ftrace_events();
  bundle->set_cpu(2);
  auto add = [&](uint64_t ts, uint32_t pid) {
    auto* e = bundle->add_event();
    e->set_timestamp(ts);
    e->set_pid(pid);
    return e;
  };
  auto* s1 = add(1000, 0)->mutable_sched_switch();
  s1->set_prev_comm("swapper/2");
  s1->set_prev_pid(0);
  s1->set_prev_prio(120);
  s1->set_prev_state(0);
  s1->set_next_comm("worker");
  s1->set_next_pid(4242);
  s1->set_next_prio(120);
  auto* irq = add(1100, 4242)->mutable_irq_handler_entry();
  irq->set_irq(45);
  irq->set_name("eth0-rx-3");
  add(1150, 4242)->mutable_irq_handler_exit()->set_irq(45);
  add(1160, 4242)->mutable_softirq_entry()->set_vec(3);
  add(1300, 4242)->mutable_softirq_exit()->set_vec(3);
  auto* w = add(1400, 4242)->mutable_sched_waking();
  w->set_comm("hog");
  w->set_pid(999);
  w->set_prio(120);
  w->set_success(1);
  w->set_target_cpu(2);
  auto* s2 = add(1500, 4242)->mutable_sched_switch();
  s2->set_prev_comm("worker");
  s2->set_prev_pid(4242);
  s2->set_prev_state(256);
  s2->set_next_comm("hog");
  s2->set_next_pid(999);
  // A switch whose prev is not the task the last one put there: the kernel
  // made a switch that never reached the recorder.
  auto* s3 = add(1700, 31)->mutable_sched_switch();
  s3->set_prev_pid(31);
  s3->set_prev_state(1);
  s3->set_next_comm("worker");
  s3->set_next_pid(4242);
  trace.Add(packet);

  RecordingSink sink;
  auto stats = ReadBytes(trace.bytes(), sink);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  ASSERT_EQ(sink.events.size(), 8u);
  const auto& first = std::get<model::SchedSwitch>(sink.events[0].payload);
  EXPECT_EQ(sink.events[0].cpu, 2u);
  EXPECT_EQ(first.prev_tid, 0);
  EXPECT_EQ(first.next_tid, 4242);
  EXPECT_EQ(first.next_comm.view(), "worker");
  EXPECT_EQ(std::get<model::IrqEntry>(sink.events[1].payload).irq, 45);
  EXPECT_EQ(sink.events[1].tid, 4242);
  ASSERT_FALSE(sink.irq_names.empty());
  EXPECT_EQ(sink.irq_names[0], std::make_pair(45, std::string("eth0-rx-3")));
  EXPECT_EQ(std::get<model::SoftirqEntry>(sink.events[3].payload).vec, 3u);
  const auto& waking = std::get<model::SchedWaking>(sink.events[5].payload);
  EXPECT_EQ(waking.tid, 999);
  EXPECT_EQ(waking.target_cpu, 2);
  EXPECT_EQ(waking.comm.view(), "hog");
  const auto& preempt = std::get<model::SchedSwitch>(sink.events[6].payload);
  EXPECT_EQ(preempt.prev_tid, 4242);
  EXPECT_EQ(preempt.prev_state, 256);
  EXPECT_EQ(stats->unseen_switches, 1u);
}

// Perfetto's recorder with compact sched: switches and wakings in columns,
// irq events in full form in the same bundle, merged by time.
TEST(TraceReader, MergesPerfettoCompactSchedWithFullEventsOfTheSameBundle) {
  TestTrace trace;
  perfetto::TracePacket packet;
  auto* bundle = packet.mutable_ftrace_events();
  bundle->set_cpu(0);
  auto* cs = bundle->mutable_compact_sched();
  cs->add_intern_table("worker");
  cs->add_intern_table("swapper/0");
  // Switches at 1000 (-> 7) and 1500 (-> 0), deltas.
  cs->add_switch_timestamp(1000);
  cs->add_switch_timestamp(500);
  cs->add_switch_prev_state(0);
  cs->add_switch_prev_state(1);
  cs->add_switch_next_pid(7);
  cs->add_switch_next_pid(0);
  cs->add_switch_next_prio(120);
  cs->add_switch_next_prio(120);
  cs->add_switch_next_comm_index(0);
  cs->add_switch_next_comm_index(1);
  cs->add_waking_timestamp(1200);
  cs->add_waking_pid(8);
  cs->add_waking_target_cpu(1);
  cs->add_waking_prio(120);
  cs->add_waking_comm_index(0);
  auto* e = bundle->add_event();
  e->set_timestamp(1100);
  e->set_pid(7);
  e->mutable_softirq_entry()->set_vec(1);
  trace.Add(packet);

  RecordingSink sink;
  ASSERT_TRUE(ReadBytes(trace.bytes(), sink).ok());
  ASSERT_EQ(sink.events.size(), 4u);
  EXPECT_EQ(sink.events[0].ts, 1000u);
  EXPECT_EQ(sink.events[1].ts, 1100u);
  EXPECT_TRUE(std::holds_alternative<model::SoftirqEntry>(sink.events[1].payload));
  EXPECT_EQ(sink.events[2].ts, 1200u);
  EXPECT_EQ(std::get<model::SchedWaking>(sink.events[2].payload).target_cpu, 1);
  EXPECT_EQ(sink.events[2].tid, 7);
  EXPECT_EQ(sink.events[3].ts, 1500u);
  const auto& s = std::get<model::SchedSwitch>(sink.events[3].payload);
  EXPECT_EQ(s.prev_tid, 7);
  EXPECT_EQ(s.prev_state, 1);
  EXPECT_EQ(s.next_comm.view(), "swapper/0");
}

TEST(TraceReader, MovesEventsOfANonBootFtraceClockOntoBoottime) {
  // FtraceEventBundle: cpu 0, ftrace_clock GLOBAL (5), ftrace_timestamp (6),
  // boot_timestamp (7): boot = ftrace + 4000.
  std::string event = Wire().Varint(1, 500).Varint(2, 1).Bytes(24, Wire().Varint(1, 3).str()).str();
  std::string bundle = Wire().Varint(1, 0).Bytes(2, event).Varint(5, 2).Varint(6, 1000).Varint(7, 5000).str();
  TestTrace trace;
  trace.AddSerialized(Wire().Bytes(1, bundle).str());
  RecordingSink sink;
  ASSERT_TRUE(ReadBytes(trace.bytes(), sink).ok());
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].ts, 4500u);
}

TEST(TraceReader, SkipsPacketsAndFieldsItDoesNotUse) {
  TestTrace trace;
  trace.AddSerialized(Wire().Bytes(999, "future packet kind").Varint(8, 5).str());
  trace.AddRaw(Wire().Varint(2, 7).str());  // not a packet field at all
  AddGpunoiseBundle(trace, 0, {Switch(100, 0, 0, 10, 0, "a")});
  perfetto::TracePacket unknown_event;
  auto* e = unknown_event.mutable_ftrace_events()->add_event();
  e->set_timestamp(50);
  e->mutable_ipi_raise()->set_target_cpus(1);
  trace.Add(unknown_event);
  RecordingSink sink;
  auto stats = ReadBytes(trace.bytes(), sink);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(stats->skipped_packets, 2u);
  EXPECT_EQ(stats->unknown_ftrace_events, 1u);
}

std::string ThreeBundleTrace() {
  TestTrace trace;
  AddGpunoiseBundle(trace, 0, {Switch(100, 0, 0, 10, 0, "a")});
  AddGpunoiseBundle(trace, 0, {Switch(200, 0, 10, 11, 0, "b")});
  AddGpunoiseBundle(trace, 0, {Switch(300, 0, 11, 12, 0, "c")});
  return trace.bytes();
}

// Offsets of each top-level packet in `bytes`.
std::vector<size_t> PacketOffsets(const std::string& bytes) {
  std::vector<size_t> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    out.push_back(pos);
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + pos + 1;
    uint64_t len = 0;
    const uint8_t* q = ReadVarint(p, reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size(), &len);
    pos = static_cast<size_t>(q - reinterpret_cast<const uint8_t*>(bytes.data())) + len;
  }
  return out;
}

TEST(TraceReader, TruncatedFileIsAnErrorNamingTheByteOffset) {
  std::string bytes = ThreeBundleTrace();
  auto offsets = PacketOffsets(bytes);
  ASSERT_EQ(offsets.size(), 3u);
  std::string cut = bytes.substr(0, bytes.size() - 3);
  ScopedTempDir dir;
  TestTrace t;
  t.AddRaw(cut);
  std::string path = t.Write(dir.path(), "cut.pftrace");
  RecordingSink sink;
  TraceReader reader(sink);
  auto stats = reader.ReadFile(path);
  ASSERT_FALSE(stats.ok());
  const std::string& msg = stats.error().message;
  EXPECT_NE(msg.find("failed to read trace " + path), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated at byte " + std::to_string(cut.size())), std::string::npos) << msg;
  EXPECT_NE(msg.find("packet at byte " + std::to_string(offsets[2])), std::string::npos) << msg;
}

TEST(TraceReader, PartialReadingKeepsWhatCameBeforeTheCut) {
  std::string bytes = ThreeBundleTrace();
  std::string cut = bytes.substr(0, bytes.size() - 3);
  ScopedTempDir dir;
  TestTrace t;
  t.AddRaw(cut);
  std::string path = t.Write(dir.path(), "cut.pftrace");
  RecordingSink sink;
  ReadOptions options;
  options.partial = true;
  TraceReader reader(sink, options);
  auto stats = reader.ReadFile(path);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_TRUE(stats->truncated);
  ASSERT_EQ(stats->problems.size(), 1u);
  EXPECT_NE(stats->problems[0].find("truncated"), std::string::npos);
  EXPECT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(stats->bytes, PacketOffsets(bytes)[2]) << "only whole packets count as read";
}

TEST(TraceReader, GarbageBetweenPacketsIsCorruptionAtItsOffset) {
  std::string bytes = ThreeBundleTrace();
  size_t at = PacketOffsets(bytes)[1];
  bytes.insert(at, "\x07\x00", 2);  // wire type 7 does not exist
  RecordingSink sink;
  auto stats = ReadBytes(bytes, sink);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.error().message.find("corrupt data at byte " + std::to_string(at)), std::string::npos)
      << stats.error().message;
}

TEST(TraceReader, MalformedPacketContentNamesThePacketAndIsSkippedWhenPartial) {
  TestTrace trace;
  AddGpunoiseBundle(trace, 0, {Switch(100, 0, 0, 10, 0, "a")});
  size_t bad_at = trace.bytes().size();
  // A bundle whose event field claims more bytes than the bundle holds.
  std::string bundle = Wire().Varint(1, 0).Raw("\x12\x40\x08\x01").str();
  trace.AddSerialized(Wire().Bytes(1, bundle).str());
  AddGpunoiseBundle(trace, 0, {Switch(300, 0, 10, 12, 0, "c")});

  RecordingSink strict_sink;
  auto strict = ReadBytes(trace.bytes(), strict_sink);
  ASSERT_FALSE(strict.ok());
  // The packet's payload starts after its tag and one-byte length.
  EXPECT_NE(strict.error().message.find("corrupt packet at byte " + std::to_string(bad_at + 2)), std::string::npos)
      << strict.error().message;

  RecordingSink sink;
  ReadOptions options;
  options.partial = true;
  auto partial = ReadBytes(trace.bytes(), sink, options);
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->malformed_packets, 1u);
  EXPECT_EQ(partial->problems.size(), 1u);
  EXPECT_EQ(sink.events.size(), 2u) << "the packets around the bad one are read";
}

TEST(TraceReader, InflatesCompressedPackets) {
  std::string inner = ThreeBundleTrace();
  uLongf size = compressBound(inner.size());
  std::string compressed(size, '\0');
  ASSERT_EQ(compress(reinterpret_cast<Bytef*>(compressed.data()), &size,
                     reinterpret_cast<const Bytef*>(inner.data()), inner.size()),
            Z_OK);
  compressed.resize(size);
  TestTrace trace;
  trace.AddSerialized(Wire().Bytes(50, compressed).str());
  RecordingSink sink;
  auto stats = ReadBytes(trace.bytes(), sink);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(stats->compressed_packets, 1u);
  EXPECT_EQ(sink.events.size(), 3u);

  // A broken compressed block is corruption at its offset.
  TestTrace broken;
  broken.AddSerialized(Wire().Bytes(50, compressed.substr(0, compressed.size() / 2)).str());
  RecordingSink sink2;
  auto bad = ReadBytes(broken.bytes(), sink2);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("compressed packets at byte"), std::string::npos) << bad.error().message;
}

TEST(TraceReader, StreamsPacketsLargerThanItsBufferFromAFile) {
  std::vector<model::Event> events;
  for (int i = 0; i < 40000; ++i) events.push_back(Switch(1000 + 10 * i, 1, 0, 100 + i % 7, i % 2, "t"));
  TestTrace trace;
  AddGpunoiseBundle(trace, 1, events);
  AddGpunoiseBundle(trace, 0, {Switch(5, 0, 0, 3, 0, "x")});
  ASSERT_GT(trace.bytes().size(), 64u << 10);
  ScopedTempDir dir;
  std::string path = trace.Write(dir.path(), "big.pftrace");
  RecordingSink sink;
  ReadOptions options;
  options.buffer_bytes = 1;  // the reader's smallest buffer (64 KiB) must grow
  TraceReader reader(sink, options);
  auto stats = reader.ReadFile(path);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(sink.events.size(), 40001u);
  EXPECT_EQ(stats->bytes, trace.bytes().size());
}

TEST(TraceReader, ReadsTheWritersCompressedBlocksLikeThePlainFile) {
  // Several blocks' worth of bundles, plus a process tree, through the
  // writer with and without compression.
  ScopedTempDir dir;
  auto plain = perfetto::TraceFileWriter::Create(dir.path() + "/plain.pftrace", 0);
  auto zlib = perfetto::TraceFileWriter::Create(dir.path() + "/zlib.pftrace", 0, perfetto::TraceCompression::kZlib);
  ASSERT_TRUE(plain.ok() && zlib.ok());
  perfetto::FtraceBundleEncoder encoder;
  FixedIrqNames names;
  perfetto::TracePacket packet;
  model::ProcessSnapshot processes;
  processes.threads.push_back({100, 100, "trainer"});
  perfetto::FillProcessTree(&packet, processes);
  ASSERT_TRUE(plain->WritePacket(packet).ok() && zlib->WritePacket(packet).ok());
  uint64_t ts = 1000;
  for (int drain = 0; drain < 1000; ++drain) {
    for (uint32_t cpu = 0; cpu < 2; ++cpu) {
      std::vector<model::Event> events;
      for (int i = 0; i < 100; ++i, ts += 10) events.push_back(Switch(ts, cpu, 0, 100 + i % 7, i % 2, "t"));
      packet.Clear();
      encoder.Encode({cpu, false, 0}, events, names, &packet);
      ASSERT_TRUE(plain->WritePacket(packet).ok() && zlib->WritePacket(packet).ok());
    }
  }
  ASSERT_TRUE(plain->Commit().ok() && zlib->Commit().ok());
  ASSERT_GT(zlib->packet_bytes(), 2 * perfetto::TraceFileWriter::kCompressionBlockBytes);

  RecordingSink from_plain, from_zlib;
  auto plain_stats = TraceReader(from_plain).ReadFile(dir.path() + "/plain.pftrace");
  auto zlib_stats = TraceReader(from_zlib).ReadFile(dir.path() + "/zlib.pftrace");
  ASSERT_TRUE(plain_stats.ok() && zlib_stats.ok()) << (zlib_stats.ok() ? "" : zlib_stats.error().message);
  EXPECT_EQ(plain_stats->compressed_packets, 0u);
  EXPECT_GE(zlib_stats->compressed_packets, 3u);
  EXPECT_EQ(zlib_stats->events, plain_stats->events);
  ASSERT_EQ(from_zlib.events.size(), 200000u);
  ASSERT_EQ(from_zlib.events.size(), from_plain.events.size());
  for (size_t i = 0; i < from_plain.events.size(); ++i) {
    ASSERT_EQ(from_zlib.events[i].ts, from_plain.events[i].ts) << i;
    ASSERT_EQ(from_zlib.events[i].cpu, from_plain.events[i].cpu) << i;
  }
  ASSERT_EQ(from_zlib.threads.size(), 1u);
  EXPECT_EQ(from_zlib.threads[0].name, "trainer");
}

TEST(TraceReader, MissingFileIsAOneLineError) {
  RecordingSink sink;
  TraceReader reader(sink);
  auto stats = reader.ReadFile("/nonexistent/x.pftrace");
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.error().message.find("failed to open trace /nonexistent/x.pftrace"), std::string::npos);
  EXPECT_EQ(stats.error().message.find('\n'), std::string::npos);
}

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
  session.program_misses.push_back({"sched", "gn_sched_switch", 4});
  session.map_full.push_back({"sampler", "gn_samples", 9});
  session.records_outside_cpus = 6;
  session.switch_chain_checked = false;

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
  ASSERT_EQ(back.program_misses.size(), 1u);
  EXPECT_EQ(back.program_misses[0].collector, "sched");
  EXPECT_EQ(back.program_misses[0].program, "gn_sched_switch");
  EXPECT_EQ(back.program_misses[0].missed, 4u);
  ASSERT_EQ(back.map_full.size(), 1u);
  EXPECT_EQ(back.map_full[0].map, "gn_samples");
  EXPECT_EQ(back.map_full[0].full, 9u);
  EXPECT_EQ(back.records_outside_cpus, 6u);
  EXPECT_FALSE(back.switch_chain_checked);
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
