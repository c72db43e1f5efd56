#include "merge/trace_merger.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "export/perfetto/expand_compressed_packets.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/trace_file_writer.h"

namespace gpunoise::perfetto {
namespace {

class TraceMergerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpunoise-merge-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    for (const auto& f : files_) unlink(f.c_str());
    rmdir(dir_.c_str());
  }

  std::string Path(const std::string& name) {
    files_.push_back(dir_ + "/" + name);
    return files_.back();
  }

  std::string WriteTrace(const std::string& name, const Trace& trace) {
    std::string path = Path(name);
    std::ofstream(path, std::ios::binary) << trace.SerializeAsString();
    return path;
  }

  // The same packets, in zlib blocks as `gpunoise record` writes them.
  std::string WriteCompressedTrace(const std::string& name, const Trace& trace) {
    std::string path = Path(name);
    auto writer = TraceFileWriter::Create(path, 0, TraceCompression::kZlib);
    EXPECT_TRUE(writer.ok());
    for (const auto& p : trace.packet()) EXPECT_TRUE(writer->WritePacket(p).ok());
    EXPECT_TRUE(writer->Commit().ok());
    return path;
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // A recording-like input: a clock snapshot without a sequence, then track
  // events on sequences 1 and 2, and a field our subset does not declare.
  static Trace Input(uint64_t clock_ts) {
    Trace t;
    auto* clock = t.add_packet();
    clock->set_timestamp(clock_ts);
    auto* c = clock->mutable_clock_snapshot()->add_clocks();
    c->set_clock_id(BUILTIN_CLOCK_BOOTTIME);
    c->set_timestamp(clock_ts);
    for (uint32_t seq : {1u, 2u, 1u}) {
      auto* p = t.add_packet();
      p->set_trusted_packet_sequence_id(seq);
      p->set_timestamp(clock_ts + seq);
      p->mutable_track_event()->set_name("slice on " + std::to_string(seq));
      // Field 900 (varint): unknown to the subset, must survive a merge.
      p->GetReflection()->MutableUnknownFields(p)->AddVarint(900, 7);
    }
    return t;
  }

  // Two Input()s merged, a then b: a's sequences 1 and 2 became 5 and 6,
  // b's 7 and 8; clock snapshots keep no sequence.
  static void ExpectSequencesRenumbered(const Trace& merged) {
    ASSERT_EQ(merged.packet_size(), 8);
    std::map<std::string, std::set<uint32_t>> ids_by_name;
    for (int i = 0; i < 8; ++i) {
      const auto& p = merged.packet(i);
      if (!p.has_track_event()) continue;
      ids_by_name[p.track_event().name() + (i < 4 ? " a" : " b")].insert(p.trusted_packet_sequence_id());
    }
    EXPECT_EQ(ids_by_name["slice on 1 a"], std::set<uint32_t>{5});
    EXPECT_EQ(ids_by_name["slice on 2 a"], std::set<uint32_t>{6});
    EXPECT_EQ(ids_by_name["slice on 1 b"], std::set<uint32_t>{7});
    EXPECT_EQ(ids_by_name["slice on 2 b"], std::set<uint32_t>{8});
  }

  std::string dir_;
  std::vector<std::string> files_;
};

TEST_F(TraceMergerTest, EachInputsSequencesGetDistinctIds) {
  std::string a = WriteTrace("a.pftrace", Input(1000));
  std::string b = WriteTrace("b.pftrace", Input(2000));
  std::string out = Path("out.pftrace");
  auto writer = TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  TraceMerger merger(&*writer, 5);
  auto sa = merger.Append(a);
  auto sb = merger.Append(b);
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_EQ(sa->packets, 4u);
  EXPECT_EQ(sa->sequences, 2u);
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(merger.packets(), 8u);
  EXPECT_EQ(merger.sequences(), 4u);

  Trace merged;
  ASSERT_TRUE(merged.ParseFromString(Read(out)));
  ASSERT_NO_FATAL_FAILURE(ExpectSequencesRenumbered(merged));
  // Clock snapshots keep no sequence and their exact bytes; unknown fields survive.
  EXPECT_FALSE(merged.packet(0).has_trusted_packet_sequence_id());
  EXPECT_EQ(merged.packet(0).SerializeAsString(), Input(1000).packet(0).SerializeAsString());
  EXPECT_EQ(merged.packet(4).SerializeAsString(), Input(2000).packet(0).SerializeAsString());
  EXPECT_EQ(merged.packet(1).GetReflection()->GetUnknownFields(merged.packet(1)).field_count(), 1);
  EXPECT_EQ(merged.packet(1).timestamp(), 1001u);
}

TEST_F(TraceMergerTest, EveryPacketOfAnotherMachinesInputCarriesItsMachineIdCompressedOrNot) {
  std::string host = WriteTrace("host.pftrace", Input(1000));
  std::string plain = WriteTrace("plain.pftrace", Input(2000));
  std::string packed = WriteCompressedTrace("packed.pftrace", Input(3000));
  std::string out = Path("out.pftrace");
  auto writer = TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  TraceMerger merger(&*writer);
  ASSERT_TRUE(merger.Append(host, 0).ok());
  ASSERT_TRUE(merger.Append(plain, 1).ok());
  ASSERT_TRUE(merger.Append(packed, 2).ok());
  ASSERT_TRUE(writer->Commit().ok());

  Trace merged;
  ASSERT_TRUE(merged.ParseFromString(Read(out)));
  ASSERT_EQ(merged.packet_size(), 12);
  for (int i = 0; i < 12; ++i) {
    const auto& p = merged.packet(i);
    // The host's packets carry none: the trace processor reads that as machine 0.
    if (i < 4) {
      EXPECT_FALSE(p.has_machine_id()) << i;
    } else {
      EXPECT_EQ(p.machine_id(), i < 8 ? 1u : 2u) << i;
    }
    // Nothing else changed: unknown fields survive beside the new field.
    if (p.has_track_event()) {
      EXPECT_EQ(p.GetReflection()->GetUnknownFields(p).field_count(), 1) << i;
    }
  }
}

TEST_F(TraceMergerTest, AnotherMachinesClockSnapshotsGoOutAsRemoteClockSyncsAndTheHostsStay) {
  Trace remote = Input(5000);
  // A GPU fragment's first packet: its snapshot starts a sequence.
  auto* first = remote.add_packet();
  first->set_trusted_packet_sequence_id(3);
  first->set_timestamp(5100);
  first->set_first_packet_on_sequence(true);
  first->set_sequence_flags(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  auto* c = first->mutable_clock_snapshot()->add_clocks();
  c->set_clock_id(BUILTIN_CLOCK_BOOTTIME);
  c->set_timestamp(5100);
  std::string host = WriteTrace("host.pftrace", Input(1000));
  std::string packed = WriteCompressedTrace("remote.pftrace", remote);
  std::string out = Path("out.pftrace");
  auto writer = TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  TraceMerger merger(&*writer);
  merger.set_remote_boottime_offset(-4000);  // the host's BOOTTIME is 4000 ns behind
  ASSERT_TRUE(merger.Append(host, 0).ok());
  auto stats = merger.Append(packed, 1);
  ASSERT_TRUE(stats.ok());
  ASSERT_TRUE(writer->Commit().ok());

  Trace merged;
  ASSERT_TRUE(merged.ParseFromString(Read(out)));
  // The host's 4 as they were; the remote snapshot became a sync, its 3
  // events stay, and the fragment's first packet became a sync and the
  // packet without its snapshot.
  ASSERT_EQ(merged.packet_size(), 4 + 1 + 3 + 2);
  EXPECT_EQ(stats->packets, 6u);
  EXPECT_EQ(merged.packet(0).SerializeAsString(), Input(1000).packet(0).SerializeAsString());
  for (int i = 4; i < merged.packet_size(); ++i) {
    const auto& p = merged.packet(i);
    EXPECT_EQ(p.machine_id(), 1u) << i;
    EXPECT_FALSE(p.has_clock_snapshot()) << i;
  }
  const auto& sync = merged.packet(4).remote_clock_sync();
  ASSERT_EQ(sync.synced_clocks_size(), 2);
  EXPECT_EQ(sync.synced_clocks(0).client_clocks().clocks(0).timestamp(), 5000u);
  EXPECT_EQ(sync.synced_clocks(0).host_clocks().clocks(0).timestamp(), 1000u);
  EXPECT_EQ(merged.packet(8).remote_clock_sync().synced_clocks(1).host_clocks().clocks(0).timestamp(), 1100u);
  const auto& rest = merged.packet(9);
  EXPECT_TRUE(rest.first_packet_on_sequence());
  EXPECT_EQ(rest.sequence_flags(), static_cast<uint32_t>(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED));
  EXPECT_EQ(rest.timestamp(), 5100u);
  EXPECT_NE(rest.trusted_packet_sequence_id(), 0u);
}

TEST_F(TraceMergerTest, AnInputOnTheHostLosesAMachineIdItHadBefore) {
  Trace t = Input(1000);
  for (auto& p : *t.mutable_packet()) p.set_machine_id(4);
  std::string in = WriteTrace("remote.pftrace", t);
  std::string out = Path("out.pftrace");
  auto writer = TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  TraceMerger merger(&*writer);
  ASSERT_TRUE(merger.Append(in, 0).ok());
  ASSERT_TRUE(writer->Commit().ok());
  Trace merged;
  ASSERT_TRUE(merged.ParseFromString(Read(out)));
  for (const auto& p : merged.packet()) EXPECT_FALSE(p.has_machine_id());
}

TEST_F(TraceMergerTest, TruncatedInputIsAnErrorNamingFileAndOffset) {
  std::string whole = Input(1000).SerializeAsString();
  std::string path = Path("cut.pftrace");
  std::ofstream(path, std::ios::binary) << whole.substr(0, whole.size() - 3);
  std::string out = Path("out.pftrace");
  auto writer = TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  TraceMerger merger(&*writer);
  auto r = merger.Append(path);
  ASSERT_FALSE(r.ok());
  // The last packet starts where the first three end.
  Trace t = Input(1000);
  size_t last_start = 0;
  for (int i = 0; i < 3; ++i) {
    std::string one;
    Trace single;
    *single.add_packet() = t.packet(i);
    last_start += single.SerializeAsString().size();
  }
  EXPECT_EQ(r.error().message,
            path + ": truncated at byte " + std::to_string(last_start) + ": packet of " +
                std::to_string(t.packet(3).ByteSizeLong()) + " bytes, " +
                std::to_string(t.packet(3).ByteSizeLong() - 3) + " left in the file");
  EXPECT_EQ(merger.packets(), 3u);  // the complete packets before it
}

TEST_F(TraceMergerTest, CorruptInputIsAnErrorNamingFileAndOffset) {
  std::string whole = Input(1000).SerializeAsString();
  std::string path = Path("bad.pftrace");
  std::ofstream(path, std::ios::binary) << whole << std::string("\x08\x01", 2);
  std::string out = Path("out.pftrace");
  auto writer = TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  TraceMerger merger(&*writer);
  auto r = merger.Append(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, path + ": corrupt at byte " + std::to_string(whole.size()) +
                                   ": expected a trace packet, found field 1 wire type 0");
}

TEST_F(TraceMergerTest, MalformedPacketContentIsCorrupt) {
  // A packet whose inner field claims more bytes than the packet has.
  std::string bogus_packet = std::string("\x5a\x10", 2) + "abc";  // field 11, len 16, 3 bytes
  std::string file = std::string("\x0a", 1) + static_cast<char>(bogus_packet.size()) + bogus_packet;
  std::string path = Path("inner.pftrace");
  std::ofstream(path, std::ios::binary) << file;
  std::string out = Path("out.pftrace");
  auto writer = TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  TraceMerger merger(&*writer);
  auto r = merger.Append(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, path + ": corrupt at byte 0: field 11 overruns the packet at packet byte 0");
}

TEST_F(TraceMergerTest, EmptyFileMergesToNothing) {
  std::string path = Path("empty.pftrace");
  std::ofstream(path, std::ios::binary) << "";
  std::string out = Path("out.pftrace");
  auto writer = TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  TraceMerger merger(&*writer);
  auto r = merger.Append(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->packets, 0u);
}

TEST(RenumberSequence, RewritesOnlyTheSequenceId) {
  TracePacket p;
  p.set_timestamp(42);
  p.set_trusted_packet_sequence_id(3);
  p.mutable_track_event()->set_name("x");
  auto out = RenumberSequence(p.SerializeAsString(), [](uint32_t id) { return id * 100; });
  ASSERT_TRUE(out.ok());
  TracePacket q;
  ASSERT_TRUE(q.ParseFromString(*out));
  EXPECT_EQ(q.trusted_packet_sequence_id(), 300u);
  EXPECT_EQ(q.timestamp(), 42u);
  EXPECT_EQ(q.track_event().name(), "x");
}

TEST_F(TraceMergerTest, CompressedInputsKeepDistinctSequenceIds) {
  std::string a = WriteCompressedTrace("a.pftrace", Input(1000));
  std::string b = WriteCompressedTrace("b.pftrace", Input(2000));
  for (TraceCompression output : {TraceCompression::kNone, TraceCompression::kZlib}) {
    std::string out = Path(std::string("out-") + std::string(TraceCompressionName(output)) + ".pftrace");
    auto writer = TraceFileWriter::Create(out, 0, output);
    ASSERT_TRUE(writer.ok());
    TraceMerger merger(&*writer, 5);
    auto sa = merger.Append(a);
    auto sb = merger.Append(b);
    ASSERT_TRUE(sa.ok()) << sa.error().message;
    ASSERT_TRUE(sb.ok()) << sb.error().message;
    EXPECT_EQ(sa->packets, 4u) << "the packets inside the block, one by one";
    EXPECT_EQ(sa->compressed_blocks, 1u);
    EXPECT_EQ(sa->sequences, 2u);
    ASSERT_TRUE(writer->Commit().ok());

    Trace merged;
    ASSERT_TRUE(merged.ParseFromString(Read(out)));
    bool any_block = false;
    for (const auto& p : merged.packet()) any_block |= p.has_compressed_packets();
    EXPECT_EQ(any_block, output == TraceCompression::kZlib);
    ASSERT_TRUE(ExpandCompressedPackets(&merged).ok());
    ASSERT_NO_FATAL_FAILURE(ExpectSequencesRenumbered(merged));
    EXPECT_EQ(merged.packet(4).SerializeAsString(), Input(2000).packet(0).SerializeAsString());
    EXPECT_EQ(merged.packet(1).GetReflection()->GetUnknownFields(merged.packet(1)).field_count(), 1);
  }
}

TEST_F(TraceMergerTest, ABlockThatDoesNotInflateIsCorruptAtItsOffset) {
  Trace t = Input(1000);
  std::string first = t.SerializeAsString();
  TracePacket broken;
  broken.set_compressed_packets("definitely not zlib");
  Trace tail;
  *tail.add_packet() = broken;
  std::string path = Path("broken-block.pftrace");
  std::ofstream(path, std::ios::binary) << first << tail.SerializeAsString();
  std::string out = Path("out.pftrace");
  auto writer = TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  TraceMerger merger(&*writer);
  auto r = merger.Append(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind(path + ": corrupt at byte " + std::to_string(first.size()) +
                                        ": compressed packets: deflate stream is corrupt",
                                    0),
            0u)
      << r.error().message;
  EXPECT_EQ(merger.packets(), 4u);
}

TEST(FindCompressedPackets, FindsZlibAndZstdBlocksAndNothingElse) {
  TracePacket block;
  block.set_compressed_packets("zz");
  // The result points into its input: the input outlives it.
  const std::string block_bytes = block.SerializeAsString();
  auto found = FindCompressedPackets(block_bytes);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->codec, CompressedPackets::Codec::kZlib);
  EXPECT_EQ((*found)->bytes, "zz");
  std::string zstd_block = std::string("\xaa\x08\x02", 3) + "yy";  // field 133, length 2
  found = FindCompressedPackets(zstd_block);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->codec, CompressedPackets::Codec::kZstd);
  TracePacket plain;
  plain.set_timestamp(5);
  const std::string plain_bytes = plain.SerializeAsString();
  found = FindCompressedPackets(plain_bytes);
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

}  // namespace
}  // namespace gpunoise::perfetto
