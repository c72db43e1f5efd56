// The trace reader on damaged, compressed and missing files.
#include "import/trace_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/metadata_packets.h"
#include "export/perfetto/trace_file_writer.h"
#include "import/test_trace.h"
#include "import/trace_reader_test_support.h"
#include "export/perfetto/parsed_packet.h"

namespace gpunoise::import {
namespace {

using testing::ScopedTempDir;
using testing::Wire;
using namespace reader_test;

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
  perfetto::TracePacketBuilder built;
  model::ProcessSnapshot processes;
  processes.threads.push_back({100, 100, "trainer"});
  perfetto::FillProcessTree(&built, processes);
  packet = perfetto::Parsed(built);
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

}  // namespace
}  // namespace gpunoise::import
