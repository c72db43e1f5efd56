#include "export/perfetto/trace_file_writer.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <span>
#include <sstream>

#include "common/files.h"
#include "compression/inflate.h"
#include "export/perfetto/expand_compressed_packets.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "integration/support/privileges.h"

namespace gpunoise::perfetto {
namespace {

std::string MakeTempDir() {
  char tmpl[] = "/tmp/gpunoise-writer-XXXXXX";
  return ::mkdtemp(tmpl);
}

// A temporary directory removed, with what is in it, when the test ends.
class TempDir {
 public:
  TempDir() : path_(MakeTempDir()) {}
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TracePacket Packet(uint64_t ts) {
  TracePacket p;
  p.set_timestamp(ts);
  p.mutable_ftrace_events()->set_cpu(static_cast<uint32_t>(ts % 4));
  return p;
}

TEST(TraceFileWriter, FramesPacketsAsAPerfettoTrace) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  std::string path = dir + "/t.pftrace";
  auto w = TraceFileWriter::Create(path, 0);
  ASSERT_TRUE(w.ok()) << w.error().message;
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(w->WritePacket(Packet(i)).ok());
  ASSERT_TRUE(w->Commit().ok());
  auto bytes = ReadFileToString(path);
  ASSERT_TRUE(bytes.ok());
  Trace trace;
  ASSERT_TRUE(trace.ParseFromString(*bytes));
  ASSERT_EQ(trace.packet_size(), 1000);
  EXPECT_EQ(trace.packet(999).timestamp(), 999u);
  EXPECT_EQ(w->bytes_written(), bytes->size());
}

TEST(TraceFileWriter, FileAppearsUnderItsNameOnlyOnCommit) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  std::string path = dir + "/t.pftrace";
  auto w = TraceFileWriter::Create(path);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->WritePacket(Packet(1)).ok());
  ASSERT_TRUE(w->Flush().ok());
  EXPECT_FALSE(PathExists(path));
  EXPECT_TRUE(PathExists(w->temp_path()));
  std::string temp = w->temp_path();
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_TRUE(PathExists(path));
  EXPECT_FALSE(PathExists(temp));
  auto names = ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 1u) << "reserve and temporary files are gone";
}

TEST(TraceFileWriter, AbandonedWriterLeavesNoFiles) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  {
    auto w = TraceFileWriter::Create(dir + "/t.pftrace");
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->WritePacket(Packet(1)).ok());
  }
  auto names = ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  EXPECT_TRUE(names->empty());
}

TEST(TraceFileWriter, RejectsUnwritableOrDirectoryPaths) {
  EXPECT_FALSE(TraceFileWriter::Create("/nonexistent-dir/t.pftrace").ok());
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  auto w = TraceFileWriter::Create(dir);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("directory"), std::string::npos);
}

std::string Contents(const std::string& path) {
  auto s = ReadFileToString(path);
  return s.ok() ? *s : "<unreadable>";
}

TEST(TraceFileWriter, TraceIsOwnerOnlyWhateverTheUmask) {
  TempDir temp_dir;
  std::string path = temp_dir.path() + "/t.pftrace";
  mode_t old = ::umask(0);
  auto w = TraceFileWriter::Create(path);
  ::umask(old);
  ASSERT_TRUE(w.ok()) << w.error().message;
  struct stat st {};
  ASSERT_EQ(::stat(w->temp_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u) << "the temporary file too: it holds the trace so far";
  ASSERT_TRUE(w->WritePacket(Packet(1)).ok());
  ASSERT_TRUE(w->Commit().ok());
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST(TraceFileWriter, SymlinkAtTheOutputPathIsRefusedAndItsTargetUntouched) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  std::string target = dir + "/precious";
  std::ofstream(target) << "precious";
  std::string path = dir + "/t.pftrace";
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  auto w = TraceFileWriter::Create(path);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message, "refusing to write " + path + ": " + path + " is a symbolic link");
  EXPECT_EQ(Contents(target), "precious");
  auto names = ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 2u) << "no temporary or reserve file was made";
}

TEST(TraceFileWriter, OutputIntoANonStickyWorldWritableDirectoryIsRefused) {
  TempDir temp_dir;
  std::string dir = temp_dir.path() + "/shared";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  auto w = TraceFileWriter::Create(dir + "/t.pftrace");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message, "refusing to write " + dir + "/t.pftrace: " + dir +
                                   " is writable by other users and not sticky");
  auto names = ListDirectory(dir);
  ASSERT_TRUE(names.ok());
  EXPECT_TRUE(names->empty());
  // With the sticky bit, as /tmp has, it is written.
  ASSERT_EQ(::chmod(dir.c_str(), 01777), 0);
  EXPECT_TRUE(TraceFileWriter::Create(dir + "/t.pftrace").ok());
}

TEST(TraceFileWriter, TwoWritersInOneDirectoryGetDifferentTempNames) {
  TempDir temp_dir;
  std::string path = temp_dir.path() + "/t.pftrace";
  auto a = TraceFileWriter::Create(path);
  auto b = TraceFileWriter::Create(path);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->temp_path(), b->temp_path());
  EXPECT_EQ(a->temp_path().find(std::to_string(::getpid())), std::string::npos) << a->temp_path();
}

TEST(TraceFileWriter, FilesPlantedAtTheOldPredictableNamesDoNotMatter) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  std::string target = dir + "/precious";
  std::ofstream(target) << "precious";
  // Before: .NAME.tmp-PID and .NAME.reserve-PID, opened with O_TRUNC and
  // no O_NOFOLLOW, so these symlinks would have truncated `target`.
  std::string pid = std::to_string(::getpid());
  ASSERT_EQ(::symlink(target.c_str(), (dir + "/.t.pftrace.tmp-" + pid).c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), (dir + "/.t.pftrace.reserve-" + pid).c_str()), 0);
  auto w = TraceFileWriter::Create(dir + "/t.pftrace");
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_TRUE(w->WritePacket(Packet(1)).ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(Contents(target), "precious");
}

TEST(TraceFileWriter, ASymlinkPlantedBeforeCommitIsNotRenamedOver) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  std::string path = dir + "/t.pftrace";
  auto w = TraceFileWriter::Create(path);
  ASSERT_TRUE(w.ok());
  std::string target = dir + "/precious";
  std::ofstream(target) << "precious";
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  Status st = w->Commit();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("is a symbolic link"), std::string::npos) << st.error().message;
  EXPECT_EQ(Contents(target), "precious");
}

TEST(TraceFileWriter, FramingMatchesProtobufForLargePackets) {
  TracePacket p;
  p.mutable_process_tree();
  for (int i = 0; i < 5000; ++i) p.mutable_process_tree()->add_threads()->set_name("thread");
  std::string serialized = p.SerializeAsString();
  std::string framed;
  AppendFramedPacket(serialized, &framed);
  Trace t;
  *t.add_packet() = p;
  EXPECT_EQ(framed, t.SerializeAsString());
}

// A packet like a recording's: a CPU's bundle with a few compact-sched
// switches, names from a small set, timestamps rising by small steps.
TracePacket BundlePacket(uint64_t i) {
  TracePacket p;
  auto* bundle = p.mutable_ftrace_events();
  bundle->set_cpu(static_cast<uint32_t>(i % 2));
  auto* cs = bundle->mutable_compact_sched();
  cs->add_intern_table(i % 3 ? "gn-ping" : "swapper/1");
  for (int k = 0; k < 8; ++k) {
    cs->add_switch_timestamp(1000 + (i * 7 + static_cast<uint64_t>(k) * 13) % 900);
    cs->add_switch_next_pid(static_cast<int32_t>(4000 + (i + k) % 5));
    cs->add_switch_prev_state(k % 2);
    cs->add_switch_next_comm_index(0);
  }
  return p;
}

uint64_t SizeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return static_cast<uint64_t>(st.st_size);
}

Trace ReadRaw(const std::string& path) {
  Trace trace;
  auto bytes = ReadFileToString(path);
  EXPECT_TRUE(bytes.ok());
  if (bytes.ok()) {
    EXPECT_TRUE(trace.ParseFromString(*bytes));
  }
  return trace;
}

std::string Inflate(const std::string& deflated) {
  std::vector<uint8_t> out;
  Status st = compression::InflateZlib(
      std::span(reinterpret_cast<const uint8_t*>(deflated.data()), deflated.size()), &out);
  EXPECT_TRUE(st.ok()) << st.error().message;
  return std::string(out.begin(), out.end());
}

// A block packet carries compressed_packets and nothing else: the trace
// processor reads nothing else in it.
bool IsBareBlock(const TracePacket& p) {
  TracePacket only;
  only.set_compressed_packets(p.compressed_packets());
  return p.has_compressed_packets() && p.SerializeAsString() == only.SerializeAsString();
}

// The same `n` bundle packets into both writers, then both committed.
void WriteBundlesAndCommit(uint64_t n, TraceFileWriter& a, TraceFileWriter& b) {
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(a.WritePacket(BundlePacket(i)).ok());
    ASSERT_TRUE(b.WritePacket(BundlePacket(i)).ok());
  }
  ASSERT_TRUE(a.Commit().ok());
  ASSERT_TRUE(b.Commit().ok());
}

TEST(TraceFileWriter, CompressedFileDecodesToTheSamePackets) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  auto plain = TraceFileWriter::Create(dir + "/plain.pftrace", 0, TraceCompression::kNone);
  auto zlib = TraceFileWriter::Create(dir + "/zlib.pftrace", 0, TraceCompression::kZlib);
  ASSERT_TRUE(plain.ok() && zlib.ok());
  EXPECT_EQ(zlib->compression(), TraceCompression::kZlib);
  WriteBundlesAndCommit(20000, *plain, *zlib);

  Trace expected = ReadRaw(dir + "/plain.pftrace");
  Trace compressed = ReadRaw(dir + "/zlib.pftrace");
  ASSERT_GT(compressed.packet_size(), 1);
  for (const auto& p : compressed.packet()) EXPECT_TRUE(IsBareBlock(p));
  auto blocks = ExpandCompressedPackets(&compressed);
  ASSERT_TRUE(blocks.ok()) << blocks.error().message;
  EXPECT_EQ(*blocks, static_cast<size_t>(ReadRaw(dir + "/zlib.pftrace").packet_size()));
  ASSERT_EQ(compressed.packet_size(), expected.packet_size());
  for (int i = 0; i < expected.packet_size(); ++i)
    ASSERT_EQ(compressed.packet(i).SerializeAsString(), expected.packet(i).SerializeAsString()) << i;

  uint64_t zlib_size = SizeOf(dir + "/zlib.pftrace");
  uint64_t plain_size = SizeOf(dir + "/plain.pftrace");
  EXPECT_EQ(zlib->bytes_written(), zlib_size);
  EXPECT_EQ(zlib->packet_bytes(), plain_size) << "packet_bytes is the uncompressed size";
  EXPECT_EQ(plain->packet_bytes(), plain_size);
  EXPECT_LT(zlib_size * 3, plain_size);
}

// dir/mixed.pftrace, written by `mixed` with some blocks plain, holds one
// compressed_packets packet per deflated block and, inflated, the packets of
// dir/plain.pftrace in their order; the writer's byte counts are the files'.
void ExpectTheSamePacketsAsPlain(const std::string& dir, const TraceFileWriter& mixed) {
  Trace raw = ReadRaw(dir + "/mixed.pftrace");
  int blocks = 0;
  for (const auto& p : raw.packet()) blocks += p.has_compressed_packets();
  EXPECT_EQ(static_cast<uint64_t>(blocks), mixed.blocks_sealed() - mixed.blocks_plain());
  auto expanded = ExpandCompressedPackets(&raw);
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  Trace expected = ReadRaw(dir + "/plain.pftrace");
  ASSERT_EQ(raw.packet_size(), expected.packet_size());
  for (int i = 0; i < expected.packet_size(); ++i)
    ASSERT_EQ(raw.packet(i).SerializeAsString(), expected.packet(i).SerializeAsString()) << i;
  EXPECT_EQ(mixed.bytes_written(), SizeOf(dir + "/mixed.pftrace"));
  EXPECT_EQ(mixed.packet_bytes(), SizeOf(dir + "/plain.pftrace"));
}

// `--compress auto` on a node without CPU to spare: a block the gate
// refuses is its packets, plain, in the block's place; the file reads back
// as the same packets in the same order.
TEST(TraceFileWriter, BlocksTheGateRefusesAreWrittenPlainInTheirPlace) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  auto plain = TraceFileWriter::Create(dir + "/plain.pftrace", 0, TraceCompression::kNone);
  auto mixed = TraceFileWriter::Create(dir + "/mixed.pftrace", 0, TraceCompression::kZlib);
  ASSERT_TRUE(plain.ok() && mixed.ok());
  int asked = 0;
  mixed->CompressOnlyWhen([&asked] { return ++asked % 3 != 0; });  // every third block plain
  WriteBundlesAndCommit(40000, *plain, *mixed);
  ASSERT_GE(mixed->blocks_sealed(), 6u);
  EXPECT_EQ(static_cast<int>(mixed->blocks_sealed()), asked);
  EXPECT_EQ(mixed->blocks_plain(), mixed->blocks_sealed() / 3);

  int bare = 0;
  Trace raw = ReadRaw(dir + "/mixed.pftrace");
  for (const auto& p : raw.packet()) bare += !p.has_compressed_packets();
  EXPECT_GT(bare, 1000) << "the refused blocks' packets";
  ExpectTheSamePacketsAsPlain(dir, *mixed);
}

// The deflate on a thread of its own (record --deflate-thread): the same
// packets, in the same order, plain blocks where the gate refused, and the
// counts the recorder reads (packets in the file, bytes) as without it.
TEST(TraceFileWriter, BlocksDeflatedInTheBackgroundKeepTheirPlaceAndCounts) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  auto plain = TraceFileWriter::Create(dir + "/plain.pftrace", 0, TraceCompression::kNone);
  auto mixed = TraceFileWriter::Create(dir + "/mixed.pftrace", 0, TraceCompression::kZlib);
  ASSERT_TRUE(plain.ok() && mixed.ok());
  EXPECT_EQ(mixed->background_tid(), 0);
  ASSERT_TRUE(mixed->DeflateInBackground().ok());
  EXPECT_GT(mixed->background_tid(), 0);
  EXPECT_NE(mixed->background_tid(), ::gettid());
  int asked = 0;
  mixed->CompressOnlyWhen([&asked] { return ++asked % 3 != 0; });
  for (uint64_t i = 0; i < 40000; ++i) {
    ASSERT_TRUE(plain->WritePacket(BundlePacket(i)).ok());
    ASSERT_TRUE(mixed->WritePacket(BundlePacket(i)).ok());
    ASSERT_LE(mixed->durable_packets(), mixed->accepted_packets());
  }
  ASSERT_TRUE(mixed->Flush().ok());
  EXPECT_EQ(mixed->durable_packets(), 40000u) << "Flush waits for the background thread";
  ASSERT_TRUE(plain->Commit().ok());
  ASSERT_TRUE(mixed->Commit().ok());
  EXPECT_EQ(mixed->background_tid(), 0) << "Commit ends the thread";
  ASSERT_GE(mixed->blocks_sealed(), 6u);
  EXPECT_EQ(mixed->blocks_plain(), mixed->blocks_sealed() / 3);

  ExpectTheSamePacketsAsPlain(dir, *mixed);
}

TEST(TraceFileWriter, AWriterWithoutCompressionHasNoBackgroundThread) {
  TempDir temp_dir;
  auto w = TraceFileWriter::Create(temp_dir.path() + "/t.pftrace", 0, TraceCompression::kNone);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->DeflateInBackground().ok());
  EXPECT_EQ(w->background_tid(), 0);
}

TEST(TraceFileWriter, CompressedBlocksHoldWholePacketsUpToTheBlockSize) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  std::string path = dir + "/t.pftrace";
  auto w = TraceFileWriter::Create(path, 0, TraceCompression::kZlib);
  ASSERT_TRUE(w.ok());
  constexpr uint64_t kSmall = 5000;
  for (uint64_t i = 0; i < kSmall; ++i) ASSERT_TRUE(w->WritePacket(BundlePacket(i)).ok());
  size_t small_framed = w->packet_bytes() / kSmall;
  // One packet larger than a block: a block of its own.
  TracePacket big;
  big.set_timestamp(kSmall);
  big.mutable_process_tree();
  for (int i = 0; big.ByteSizeLong() < TraceFileWriter::kCompressionBlockBytes + 1000; ++i)
    for (int k = 0; k < 1000; ++k)
      big.mutable_process_tree()->add_threads()->set_name("thread " + std::to_string(i * 1000 + k));
  ASSERT_TRUE(w->WritePacket(big).ok());
  ASSERT_TRUE(w->WritePacket(BundlePacket(kSmall + 1)).ok());
  ASSERT_TRUE(w->Commit().ok());

  Trace raw = ReadRaw(path);
  std::vector<size_t> inflated_sizes;
  std::vector<int> packets_per_block;
  for (const auto& block : raw.packet()) {
    ASSERT_TRUE(IsBareBlock(block));
    std::string inner_bytes = Inflate(block.compressed_packets());
    Trace inner;
    ASSERT_TRUE(inner.ParseFromString(inner_bytes)) << "a block holds whole packets";
    inflated_sizes.push_back(inner_bytes.size());
    packets_per_block.push_back(inner.packet_size());
  }
  ASSERT_GE(inflated_sizes.size(), 4u);
  size_t n = inflated_sizes.size();
  // Full blocks before the big packet: each within the limit, and sealed
  // only when the next packet would not have fit.
  for (size_t i = 0; i + 3 < n; ++i) {
    EXPECT_LE(inflated_sizes[i], TraceFileWriter::kCompressionBlockBytes) << i;
    EXPECT_GT(inflated_sizes[i] + 2 * small_framed, TraceFileWriter::kCompressionBlockBytes) << i;
  }
  EXPECT_EQ(packets_per_block[n - 2], 1) << "the big packet alone";
  EXPECT_GT(inflated_sizes[n - 2], TraceFileWriter::kCompressionBlockBytes);
  EXPECT_EQ(packets_per_block[n - 1], 1) << "the last packet, sealed by Commit";

  auto expanded = ExpandCompressedPackets(&raw);
  ASSERT_TRUE(expanded.ok());
  ASSERT_EQ(raw.packet_size(), static_cast<int>(kSmall + 2));
  EXPECT_TRUE(raw.packet(kSmall).has_process_tree());
  EXPECT_EQ(raw.packet(kSmall - 1).SerializeAsString(), BundlePacket(kSmall - 1).SerializeAsString());
}

TEST(TraceFileWriter, FlushPutsEveryPacketSoFarInTheFile) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  auto w = TraceFileWriter::Create(dir + "/t.pftrace", 0, TraceCompression::kZlib);
  ASSERT_TRUE(w.ok());
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(w->WritePacket(Packet(i)).ok());
  ASSERT_TRUE(w->Flush().ok());
  Trace so_far = ReadRaw(w->temp_path());
  ASSERT_EQ(so_far.packet_size(), 1) << "one small block";
  ASSERT_TRUE(ExpandCompressedPackets(&so_far).ok());
  ASSERT_EQ(so_far.packet_size(), 10);
  EXPECT_EQ(so_far.packet(9).timestamp(), 9u);
}

TEST(TraceFileWriter, AMovedWriterKeepsItsPendingPackets) {
  TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  for (TraceCompression c : {TraceCompression::kNone, TraceCompression::kZlib}) {
    std::string path = dir + "/" + std::string(TraceCompressionName(c)) + ".pftrace";
    auto created = TraceFileWriter::Create(path, 0, c);
    ASSERT_TRUE(created.ok());
    ASSERT_TRUE(created->WritePacket(Packet(1)).ok());
    TraceFileWriter moved = std::move(*created);
    ASSERT_TRUE(moved.WritePacket(Packet(2)).ok());
    ASSERT_TRUE(moved.Commit().ok());
    Trace trace = ReadRaw(path);
    ASSERT_TRUE(ExpandCompressedPackets(&trace).ok());
    ASSERT_EQ(trace.packet_size(), 2) << TraceCompressionName(c);
    EXPECT_EQ(trace.packet(0).timestamp(), 1u);
  }
}

TEST(TraceFileWriter, AMovedWriterKeepsItsBackgroundThreadAndPendingBlocks) {
  TempDir temp_dir;
  std::string path = temp_dir.path() + "/t.pftrace";
  auto created = TraceFileWriter::Create(path, 0, TraceCompression::kZlib);
  ASSERT_TRUE(created.ok());
  ASSERT_TRUE(created->DeflateInBackground().ok());
  for (uint64_t i = 0; i < 20000; ++i) ASSERT_TRUE(created->WritePacket(BundlePacket(i)).ok());
  TraceFileWriter moved = std::move(*created);
  EXPECT_GT(moved.background_tid(), 0);
  for (uint64_t i = 20000; i < 30000; ++i) ASSERT_TRUE(moved.WritePacket(BundlePacket(i)).ok());
  ASSERT_TRUE(moved.Commit().ok());
  Trace trace = ReadRaw(path);
  ASSERT_TRUE(ExpandCompressedPackets(&trace).ok());
  ASSERT_EQ(trace.packet_size(), 30000);
  for (int i = 0; i < trace.packet_size(); ++i)
    ASSERT_EQ(trace.packet(i).SerializeAsString(), BundlePacket(static_cast<uint64_t>(i)).SerializeAsString()) << i;
}

// A small tmpfs in a mount namespace of this test process alone, so that it
// goes away with the process however the test ends. Needs root.
std::optional<std::string> PrivateTmpfs(const char* size, std::string* why) {
  *why = gpunoise::testing::RootNotMountPointReason("making / private for a tmpfs of this test's own");
  if (!why->empty()) return std::nullopt;
  if (::unshare(CLONE_NEWNS) != 0) {
    *why = std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
    return std::nullopt;
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    *why = std::string("making / private: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::string dir = MakeTempDir();  // the test unmounts and removes it
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, (std::string("size=") + size).c_str()) != 0) {
    *why = std::string("mounting a tmpfs: ") + std::strerror(errno);
    return std::nullopt;
  }
  return dir;
}

// With `background`, the blocks are deflated and written on the writer's
// thread: the error comes a call or a few blocks late, and the blocks sealed
// in between never reach the file (nor the reserve).
void DiskFullKeepsWholeCompressedBlocksAndRoomForTheFooter(bool background) {
  std::string why;
  auto dir = PrivateTmpfs("5m", &why);
  ASSERT_TRUE(dir) << why;
  // Unmounted and removed however the test ends (an ASSERT returns early).
  struct Unmount {
    std::string path;
    ~Unmount() {
      ::umount2(path.c_str(), MNT_DETACH);
      ::rmdir(path.c_str());
    }
  } unmount{*dir};
  std::string path = *dir + "/full.pftrace";
  auto w = TraceFileWriter::Create(path, TraceFileWriter::kDefaultReserveBytes, TraceCompression::kZlib);
  ASSERT_TRUE(w.ok()) << w.error().message;
  if (background) {
    ASSERT_TRUE(w->DeflateInBackground().ok());
  }
  // Packets that compress about 2x (hex of random bytes), so that the 1 MiB
  // left beside the reserve fills after a few blocks.
  std::mt19937_64 rng(3);
  Status st = OkStatus();
  uint64_t attempted = 0;
  while (st.ok() && attempted < 200000) {
    TracePacket p;
    p.set_timestamp(attempted++);
    std::string name;
    for (int k = 0; k < 16; ++k) name += fmt::format("{:016x}", rng());
    p.mutable_track_event()->set_name(name);
    st = w->WritePacket(p);
  }
  ASSERT_FALSE(st.ok()) << "the tmpfs never filled";
  EXPECT_TRUE(w->disk_full());
  EXPECT_NE(st.error().message.find("disk full"), std::string::npos) << st.error().message;
  const uint64_t durable = w->durable_packets();
  EXPECT_LT(durable, attempted);

  // The closing metadata goes into the released reserve.
  TracePacket footer;
  footer.set_timestamp(1ull << 40);
  footer.mutable_ftrace_stats()->set_phase(FtraceStats::END_OF_TRACE);
  ASSERT_TRUE(w->WritePacket(footer).ok());
  ASSERT_TRUE(w->Commit().ok());

  Trace trace = ReadRaw(path);
  ASSERT_GT(trace.packet_size(), 2);
  for (const auto& p : trace.packet()) ASSERT_TRUE(IsBareBlock(p));
  auto expanded = ExpandCompressedPackets(&trace);
  ASSERT_TRUE(expanded.ok()) << expanded.error().message;
  // Whole blocks only: the data packets run 0, 1, 2, ... with no gap, and
  // stop where the block the disk could not take began.
  ASSERT_GT(trace.packet_size(), 1000);
  for (int i = 0; i + 1 < trace.packet_size(); ++i) ASSERT_EQ(trace.packet(i).timestamp(), static_cast<uint64_t>(i));
  EXPECT_LT(static_cast<uint64_t>(trace.packet_size() - 1), attempted);
  EXPECT_EQ(static_cast<uint64_t>(trace.packet_size() - 1), durable) << "durable_packets counts what is in the file";
  EXPECT_TRUE(trace.packet(trace.packet_size() - 1).has_ftrace_stats());
}

TEST(TraceFileWriter, DiskFullKeepsWholeCompressedBlocksAndRoomForTheFooter) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  DiskFullKeepsWholeCompressedBlocksAndRoomForTheFooter(false);
}

TEST(TraceFileWriter, DiskFullInTheBackgroundKeepsWholeBlocksAndRoomForTheFooter) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  DiskFullKeepsWholeCompressedBlocksAndRoomForTheFooter(true);
}

}  // namespace
}  // namespace gpunoise::perfetto
