#include "merge/machine_alignment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/trace_file_writer.h"
#include "export/perfetto/wire_fields.h"

namespace gpunoise::perfetto {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kHour = 3600 * kSecond;
constexpr int64_t kMicro = 1000;

class MachineAlignmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpunoise-machines-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    for (const auto& f : files_) unlink(f.c_str());
    rmdir(dir_.c_str());
  }

  // A recording as `gpunoise record` writes one, compressed: a clock
  // snapshot, SystemInfo with the machine name, the session summary with
  // the boot_id, and one event `event_after_ns` after the snapshot.
  std::string Recording(const std::string& name, const std::string& boot_id,
                        const std::string& machine, ClockPair clocks) {
    Trace t;
    auto* snap = t.add_packet()->mutable_clock_snapshot();
    auto* b = snap->add_clocks();
    b->set_clock_id(BUILTIN_CLOCK_BOOTTIME);
    b->set_timestamp(static_cast<uint64_t>(clocks.boottime));
    auto* r = snap->add_clocks();
    r->set_clock_id(BUILTIN_CLOCK_REALTIME);
    r->set_timestamp(static_cast<uint64_t>(clocks.realtime));
    t.add_packet()->mutable_system_info()->set_machine_name(machine);
    auto* summary = t.add_packet();
    summary->set_trusted_packet_sequence_id(1);
    auto* e = summary->mutable_track_event();
    e->set_name("gpunoise recording");
    auto* a = e->add_debug_annotations();
    a->set_name("boot_id");
    a->set_string_value(boot_id);
    return Write(name, t, TraceCompression::kZlib);
  }

  std::string Write(const std::string& name, const Trace& t, TraceCompression compression) {
    files_.push_back(dir_ + "/" + name);
    auto writer = TraceFileWriter::Create(files_.back(), 0, compression);
    EXPECT_TRUE(writer.ok());
    for (const auto& p : t.packet()) EXPECT_TRUE(writer->WritePacket(p).ok());
    EXPECT_TRUE(writer->Commit().ok());
    return files_.back();
  }

  std::string dir_;
  std::vector<std::string> files_;
};

TEST_F(MachineAlignmentTest, ScanFindsBootIdMachineNameAndClocksInsideCompressedBlocks) {
  std::string path = Recording("a.pftrace", "b00t-1", "node7", {5 * kSecond, 1'700'000'000 * kSecond});
  auto m = ScanInputMachine(path);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->boot_id, "b00t-1");
  EXPECT_EQ(m->machine_name, "node7");
  ASSERT_TRUE(m->clocks);
  EXPECT_EQ(m->clocks->boottime, 5 * kSecond);
  EXPECT_EQ(m->clocks->realtime, 1'700'000'000 * kSecond);
}

TEST_F(MachineAlignmentTest, ScanReadsTheRecordedClockDiscipline) {
  Trace t;
  auto* e = t.add_packet()->mutable_track_event();
  e->set_name("gpunoise recording");
  auto* synced = e->add_debug_annotations();
  synced->set_name("clock.start.synced");
  synced->set_bool_value(false);
  auto* maxerror = e->add_debug_annotations();
  maxerror->set_name("clock.start.maxerror_us");
  maxerror->set_int_value(16'000'000);
  auto m = ScanInputMachine(Write("unsynced.pftrace", t, TraceCompression::kNone));
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(m->clock_synced);
  EXPECT_FALSE(*m->clock_synced);
  EXPECT_EQ(m->maxerror_us, 16'000'000);
}

TEST_F(MachineAlignmentTest, AGpuFragmentWithoutIdentityHasNeitherBootIdNorClocks) {
  Trace t;
  t.add_packet()->mutable_track_event()->set_name("kernel");
  auto m = ScanInputMachine(Write("gpu.pftrace", t, TraceCompression::kNone));
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->boot_id.empty());
  EXPECT_TRUE(m->machine_name.empty());
  EXPECT_FALSE(m->clocks);
}

TEST_F(MachineAlignmentTest, OneBootIsOneMachineAndTwoBootsOfOneHostAreTwo) {
  std::vector<InputMachine> in = {
      {"rec.pftrace", "boot-a", "node1", {}},
      {"other-process.pftrace", "boot-a", "node1", {}},
      {"node2.pftrace", "boot-b", "node2", {}},
      {"node1-previous-boot.pftrace", "boot-c", "node1", {}},
  };
  EXPECT_EQ(AssignMachines(in), (std::vector<uint32_t>{0, 0, 1, 2}));
}

TEST_F(MachineAlignmentTest, InputsWithoutIdentityJoinTheRecordingBeforeThemOnTheCommandLine) {
  std::vector<InputMachine> in = {
      {"old.pftrace", "", "", {}},        // first: a machine of its own
      {"rec.pftrace", "boot-a", "", {}},  // a new boot
      {"gpu-1.pftrace", "", "", {}},      // its GPU fragments
      {"gpu-2.pftrace", "", "", {}},
      {"node2.pftrace", "", "node2", {}},  // no boot_id: by name
      {"node2-gpu.pftrace", "", "", {}},
  };
  EXPECT_EQ(AssignMachines(in), (std::vector<uint32_t>{0, 1, 1, 1, 2, 2}));
}

// What Perfetto's trace processor (v53, ProtoTraceReader::
// CalculateClockOffsets) computes from a RemoteClockSync: per pair of
// consecutive rounds, (t1c + t2c)/2 - t1h and t2c - (t1h + t2h)/2, averaged.
int64_t TraceProcessorOffset(const std::string& packet, uint32_t* machine_id) {
  std::vector<std::pair<int64_t, int64_t>> rounds;  // host, client BOOTTIME
  auto boottime = [](std::string_view snapshot) {
    int64_t ts = 0;
    (void)wire::ForEachField(snapshot, [&](const wire::WireField& clock) {
      uint64_t id = 0, value = 0;
      (void)wire::ForEachField(clock.bytes, [&](const wire::WireField& f) {
        if (f.number == 1) id = f.varint;
        if (f.number == 2) value = f.varint;
      });
      if (id == 6) ts = static_cast<int64_t>(value);
    });
    return ts;
  };
  (void)wire::ForEachField(packet, [&](const wire::WireField& f) {
    if (f.number == 98) *machine_id = static_cast<uint32_t>(f.varint);
    if (f.number != 107) return;
    (void)wire::ForEachField(f.bytes, [&](const wire::WireField& round) {
      int64_t host = 0, client = 0;
      (void)wire::ForEachField(round.bytes, [&](const wire::WireField& s) {
        if (s.number == 2) client = boottime(s.bytes);
        if (s.number == 3) host = boottime(s.bytes);
      });
      rounds.push_back({host, client});
    });
  });
  EXPECT_GE(rounds.size(), 2u);
  int64_t sum = 0, n = 0;
  for (size_t i = 1; i < rounds.size(); ++i) {
    auto [t1h, t1c] = rounds[i - 1];
    auto [t2h, t2c] = rounds[i];
    EXPECT_LT(t2c - t1c, 30 * kSecond);
    EXPECT_TRUE(t1h && t1c && t2h && t2c);
    sum += (t1c + t2c) / 2 - t1h;
    sum += t2c - (t1h + t2h) / 2;
    n += 2;
  }
  return n ? sum / n : 0;
}

TEST_F(MachineAlignmentTest, AMachineBootedThreeHoursLaterWithA250usNtpErrorLandsWithin250us) {
  // The same instant read on both machines: node2 booted 3 h before node1
  // (its BOOTTIME is 3 h ahead) and its REALTIME runs 250 us fast.
  const int64_t real = 1'764'580'000 * kSecond;
  ClockPair host{100 * kSecond, real};
  ClockPair node2{100 * kSecond + 3 * kHour, real + 250 * kMicro};
  // Each machine's first event, 1 ms after the snapshot on its own clock.
  int64_t host_event = host.boottime + 1'000'000;
  int64_t node2_event = node2.boottime + 1'000'000;
  EXPECT_NEAR(static_cast<double>(node2_event - host_event), 3.0 * kHour, 1.0 * kSecond);

  MachineClockSync sync = AlignByRealtime(1, node2, host);
  uint32_t machine = 0;
  int64_t offset = TraceProcessorOffset(RemoteClockSyncPacket(sync), &machine);
  EXPECT_EQ(machine, 1u);
  // The trace processor puts a remote timestamp at ts - offset on the host axis.
  int64_t aligned = node2_event - offset;
  EXPECT_NEAR(static_cast<double>(aligned - host_event), 250.0 * kMicro, 50.0 * kMicro);
}

TEST_F(MachineAlignmentTest, AnotherMachinesSnapshotBecomesASyncWithAllItsClocksAndTheHostsBoottime) {
  TracePacket p;
  p.set_timestamp(7 * kSecond);
  p.set_machine_id(2);
  auto* snap = p.mutable_clock_snapshot();
  for (auto [id, ts] : {std::pair{BUILTIN_CLOCK_BOOTTIME, 7 * kSecond}, {BUILTIN_CLOCK_MONOTONIC, 6 * kSecond},
                        {BUILTIN_CLOCK_REALTIME, 1'700'000'000 * kSecond}}) {
    auto* c = snap->add_clocks();
    c->set_clock_id(id);
    c->set_timestamp(static_cast<uint64_t>(ts));
  }
  snap->set_primary_trace_clock(BUILTIN_CLOCK_BOOTTIME);
  auto r = AsRemoteClockSync(p.SerializeAsString(), 2, -5 * kSecond);
  ASSERT_TRUE(r.ok() && *r);
  // Only a timestamp and the machine were beside the snapshot: nothing left.
  EXPECT_TRUE((*r)->rest.empty());
  TracePacket sync;
  ASSERT_TRUE(sync.ParseFromString((*r)->sync_packet));
  EXPECT_EQ(sync.machine_id(), 2u);
  EXPECT_FALSE(sync.has_clock_snapshot());
  ASSERT_EQ(sync.remote_clock_sync().synced_clocks_size(), 2);
  const auto& round = sync.remote_clock_sync().synced_clocks(1);
  ASSERT_EQ(round.client_clocks().clocks_size(), 3);
  EXPECT_EQ(round.client_clocks().clocks(2).timestamp(), static_cast<uint64_t>(1'700'000'000 * kSecond));
  // The primary clock names the trace's axis: it is what must not travel.
  EXPECT_FALSE(round.client_clocks().has_primary_trace_clock());
  ASSERT_EQ(round.host_clocks().clocks_size(), 1);
  EXPECT_EQ(round.host_clocks().clocks(0).timestamp(), static_cast<uint64_t>(2 * kSecond));
  uint32_t machine = 0;
  EXPECT_EQ(TraceProcessorOffset((*r)->sync_packet, &machine), 5 * kSecond);
  // A merged trace's machine is found with its clocks in the sync.
  Trace merged;
  *merged.add_packet() = sync;
  auto machines = ScanTraceMachines(Write("merged.pftrace", merged, TraceCompression::kNone));
  ASSERT_TRUE(machines.ok());
  ASSERT_TRUE((*machines)[2].clocks);
  EXPECT_EQ((*machines)[2].clocks->boottime, 7 * kSecond);
  EXPECT_EQ((*machines)[2].clocks->realtime, 1'700'000'000 * kSecond);
}

TEST_F(MachineAlignmentTest, ASnapshotBeforeTheHostBootedOrWithASequenceClockIsNotMadeASyncEdge) {
  TracePacket p;
  auto* c = p.mutable_clock_snapshot()->add_clocks();
  c->set_clock_id(BUILTIN_CLOCK_BOOTTIME);
  c->set_timestamp(static_cast<uint64_t>(kSecond));
  // Before the host booted: the clocks join the machine's graph, no edge.
  auto before = AsRemoteClockSync(p.SerializeAsString(), 1, -2 * kSecond);
  ASSERT_TRUE(before.ok() && *before);
  TracePacket sync;
  ASSERT_TRUE(sync.ParseFromString((*before)->sync_packet));
  EXPECT_EQ(sync.remote_clock_sync().synced_clocks(0).client_clocks().clocks_size(), 1);
  EXPECT_FALSE(sync.remote_clock_sync().synced_clocks(0).has_host_clocks());
  // A sequence-scoped clock (64 and up) cannot travel in a sync.
  p.mutable_clock_snapshot()->add_clocks()->set_clock_id(64);
  auto scoped = AsRemoteClockSync(p.SerializeAsString(), 1, 0);
  ASSERT_TRUE(scoped.ok());
  EXPECT_FALSE(*scoped);
  // Nor is anything done to a packet without a snapshot.
  TracePacket event;
  event.mutable_track_event()->set_name("slice");
  auto none = AsRemoteClockSync(event.SerializeAsString(), 1, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
}

TEST_F(MachineAlignmentTest, TheClockSyncPacketParsesAsUpstreamsRemoteClockSyncOfThatMachine) {
  TracePacket p;
  ASSERT_TRUE(p.ParseFromString(RemoteClockSyncPacket({3, 7 * kSecond, 2 * kSecond})));
  EXPECT_EQ(p.machine_id(), 3u);
  ASSERT_TRUE(p.has_remote_clock_sync());
  ASSERT_EQ(p.remote_clock_sync().synced_clocks_size(), 2);
  for (const auto& round : p.remote_clock_sync().synced_clocks()) {
    ASSERT_EQ(round.client_clocks().clocks_size(), 1);
    EXPECT_EQ(round.client_clocks().clocks(0).clock_id(), static_cast<uint32_t>(BUILTIN_CLOCK_BOOTTIME));
    EXPECT_EQ(round.client_clocks().clocks(0).timestamp(), static_cast<uint64_t>(7 * kSecond));
    ASSERT_EQ(round.host_clocks().clocks_size(), 1);
    EXPECT_EQ(round.host_clocks().clocks(0).timestamp(), static_cast<uint64_t>(2 * kSecond));
  }
}

}  // namespace
}  // namespace gpunoise::perfetto

namespace gpunoise::perfetto {
namespace {

TEST(MachineLabels, TwoBootsOfOneHostAreNamedByBootOrder) {
  // Given the current boot first; the previous one booted a day earlier.
  std::vector<MachineIdentity> m = {{"node1", "boot-b", 1'700'086'400'000'000'000},
                                    {"node2", "boot-x", 1'700'000'000'000'000'000},
                                    {"node1", "boot-a", 1'700'000'000'000'000'000}};
  EXPECT_EQ(MachineLabels(m), (std::vector<std::string>{"node1 (boot 2)", "node2", "node1 (boot 1)"}));
  EXPECT_EQ(MachineLabels({{"node1", "boot-a", {}}, {"node1", "boot-a", {}}}),
            (std::vector<std::string>{"node1", "node1"}))
      << "one boot of one host keeps its name";
}

TEST(UnsyncedClockWarning, NamesTheTraceAndTheKernelsErrorBound) {
  InputMachine m;
  m.path = "node3.pftrace";
  m.machine_name = "node3";
  EXPECT_EQ(UnsyncedClockWarning(m), "") << "the trace says nothing";
  m.clock_synced = true;
  EXPECT_EQ(UnsyncedClockWarning(m), "");
  m.clock_synced = false;
  m.maxerror_us = 16'000'000;
  std::string w = UnsyncedClockWarning(m);
  EXPECT_NE(w.find("node3.pftrace"), std::string::npos) << w;
  EXPECT_NE(w.find("not synchronised"), std::string::npos) << w;
  EXPECT_NE(w.find("up to 16.000 s"), std::string::npos) << w;
}

}  // namespace
}  // namespace gpunoise::perfetto
