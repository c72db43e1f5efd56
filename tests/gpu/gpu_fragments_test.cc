#include "record/gpu/gpu_fragments.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/trace_file_writer.h"
#include "merge/trace_merger.h"
#include "record/gpu/injection_env.h"
#include "model/gpu_capture.h"

namespace gpunoise::gpu {
namespace {

class GpuFragmentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpunoise-fragments-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  void Fragment(int pid, uint64_t ts, const std::string& marker, bool truncate = false) {
    perfetto::Trace t;
    auto* p = t.add_packet();
    p->set_trusted_packet_sequence_id(static_cast<uint32_t>(pid));
    p->set_timestamp(ts);
    p->mutable_track_event()->set_name(marker);
    std::string bytes = t.SerializeAsString();
    if (truncate) bytes += std::string("\x0a\x40", 2);
    std::ofstream(dir_ + "/" + model::FragmentFileName(pid, ts), std::ios::binary) << bytes;
  }

  std::string dir_;
};

TEST_F(GpuFragmentsTest, ListsTheWindowByProcessThenTimeAndSkipsTempFiles) {
  Fragment(20, 500, "early");
  Fragment(20, 1500, "in");
  Fragment(10, 1200, "in");
  Fragment(10, 2600, "late");
  std::ofstream(dir_ + "/.gpunoise-gpu-10-00000000000000001300.pftrace.tmp") << "partial";
  std::ofstream(dir_ + "/notes.txt") << "x";
  auto files = ListGpuFragments(dir_, 1000, 2000);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0], dir_ + "/" + model::FragmentFileName(10, 1200));
  EXPECT_EQ((*files)[1], dir_ + "/" + model::FragmentFileName(20, 1500));
  auto all = ListGpuFragments(dir_, 0, 0);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 4u);
}

TEST_F(GpuFragmentsTest, TheWindowCountsFragmentsFlushedAfterItAndKeepsThoseBeforeForTheBaseline) {
  Fragment(20, 500, "early");
  Fragment(20, 1500, "in");
  Fragment(10, 2600, "late");
  Fragment(10, 2700, "later");
  auto window = ListFragmentWindow(dir_, 1000, 2000);
  ASSERT_TRUE(window.ok());
  EXPECT_EQ(window->files, std::vector<std::string>{dir_ + "/" + model::FragmentFileName(20, 1500)});
  EXPECT_EQ(window->before, std::vector<std::string>{dir_ + "/" + model::FragmentFileName(20, 500)});
  EXPECT_EQ(window->late, 2u);
  auto open_ended = ListFragmentWindow(dir_, 0, 0);
  ASSERT_TRUE(open_ended.ok());
  EXPECT_EQ(open_ended->late, 0u);
  EXPECT_EQ(open_ended->files.size(), 4u);
}

TEST_F(GpuFragmentsTest, ASymlinkedFragmentIsRefusedAndSaid) {
  Fragment(10, 1000, "good");
  std::string secret = dir_ + "/secret";
  std::ofstream(secret) << "root's data";
  std::string link = dir_ + "/" + model::FragmentFileName(11, 1000);
  ASSERT_EQ(::symlink(secret.c_str(), link.c_str()), 0);
  auto window = ListFragmentWindow(dir_, 0, 0);
  ASSERT_TRUE(window.ok());
  EXPECT_EQ(window->files, std::vector<std::string>{dir_ + "/" + model::FragmentFileName(10, 1000)});
  EXPECT_EQ(window->refused, std::vector<std::string>{link + ": is a symbolic link"});
}

TEST_F(GpuFragmentsTest, AFifoNamedLikeAFragmentIsRefusedWithoutBlocking) {
  std::string fifo = dir_ + "/" + model::FragmentFileName(11, 1000);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto window = ListFragmentWindow(dir_, 0, 0);
  ASSERT_TRUE(window.ok());
  EXPECT_TRUE(window->files.empty());
  EXPECT_EQ(window->refused, std::vector<std::string>{fifo + ": not a regular file"});
}

TEST_F(GpuFragmentsTest, AFragmentOwnedByAnotherUserIsRefusedAndSaid) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown a file to uid 65534";
  Fragment(10, 1000, "good");
  Fragment(11, 1000, "planted");
  std::string planted = dir_ + "/" + model::FragmentFileName(11, 1000);
  ASSERT_EQ(::chown(planted.c_str(), 65534, 65534), 0);
  auto window = ListFragmentWindow(dir_, 0, 0);
  ASSERT_TRUE(window.ok());
  EXPECT_EQ(window->files.size(), 1u);
  ASSERT_EQ(window->refused.size(), 1u);
  EXPECT_EQ(window->refused[0], planted + ": owned by uid 65534, not by the directory's owner (uid 0)");
  // One that turns bad between listing and reading is refused there too.
  std::vector<std::string> files = {dir_ + "/" + model::FragmentFileName(10, 1000), planted};
  auto writer = perfetto::TraceFileWriter::Create(dir_ + "/merged.pftrace", 0);
  ASSERT_TRUE(writer.ok());
  perfetto::TraceMerger merger(&*writer, 3);
  FragmentsAppended r = AppendGpuFragments(files, merger);
  EXPECT_EQ(r.packets, 1u);
  EXPECT_EQ(r.unreadable, 1u);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].rfind("refused " + planted + ": owned by uid 65534", 0), 0u) << r.problems[0];
}

TEST_F(GpuFragmentsTest, BadFragmentIsReportedAndTheRestKept) {
  Fragment(10, 1000, "good");
  Fragment(11, 1000, "cut", /*truncate=*/true);
  Fragment(12, 1000, "also good");
  auto files = ListGpuFragments(dir_, 0, 0);
  ASSERT_TRUE(files.ok());
  std::string out = dir_ + "/merged.pftrace";
  auto writer = perfetto::TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  perfetto::TraceMerger merger(&*writer, 3);
  FragmentsAppended r = AppendGpuFragments(*files, merger);
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(r.files, 3u);
  EXPECT_EQ(r.processes, 3u);
  EXPECT_EQ(r.packets, 3u);
  EXPECT_EQ(r.truncated, 1u);  // its first packet is in the trace
  EXPECT_EQ(r.unreadable, 0u);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find(model::FragmentFileName(11, 1000) + ": truncated at byte"), std::string::npos)
      << r.problems[0];
  std::ifstream in(out, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  perfetto::Trace merged;
  ASSERT_TRUE(merged.ParseFromString(ss.str()));
  ASSERT_EQ(merged.packet_size(), 3);
  EXPECT_EQ(merged.packet(0).trusted_packet_sequence_id(), 3u);
  EXPECT_EQ(merged.packet(2).trusted_packet_sequence_id(), 5u);
}

// What the trace processor checks (clock_synchronizer.h, v53): snapshots
// are read in file order, and one whose BOOTTIME is below the previous
// snapshot's of the same clock set counts as invalid_clock_snapshots and is
// dropped. Two processes flushing in turn must therefore reach the trace in
// flush order, not process after process.
TEST_F(GpuFragmentsTest, ClockSnapshotsOfSeveralProcessesReachTheTraceInTimeOrder) {
  auto fragment = [&](int pid, uint64_t ts) {
    perfetto::Trace t;
    auto* p = t.add_packet();
    p->set_trusted_packet_sequence_id(1);
    p->set_timestamp(ts);
    auto* snap = p->mutable_clock_snapshot();
    for (auto [id, v] : {std::pair{perfetto::BUILTIN_CLOCK_BOOTTIME, ts},
                         std::pair{perfetto::BUILTIN_CLOCK_MONOTONIC, ts - 100},
                         std::pair{perfetto::BUILTIN_CLOCK_REALTIME, ts + 1000000}}) {
      auto* c = snap->add_clocks();
      c->set_clock_id(id);
      c->set_timestamp(v);
    }
    std::ofstream(dir_ + "/" + model::FragmentFileName(pid, ts), std::ios::binary) << t.SerializeAsString();
  };
  // Process 10 (pid-sorted first) flushes after process 20 each time.
  for (uint64_t ts : {1000u, 2000u, 3000u}) {
    fragment(20, ts);
    fragment(10, ts + 10);
  }
  auto window = ListFragmentWindow(dir_, 0, 0);
  ASSERT_TRUE(window.ok());
  std::string out = dir_ + "/merged.pftrace";
  auto writer = perfetto::TraceFileWriter::Create(out, 0);
  ASSERT_TRUE(writer.ok());
  perfetto::TraceMerger merger(&*writer, 3);
  FragmentsAppended r = AppendGpuFragments(window->files, merger, window->before);
  ASSERT_TRUE(writer->Commit().ok());
  EXPECT_EQ(r.processes, 2u);
  std::ifstream in(out, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  perfetto::Trace merged;
  ASSERT_TRUE(merged.ParseFromString(ss.str()));
  std::vector<uint64_t> boottimes;
  for (const auto& p : merged.packet())
    if (p.has_clock_snapshot())
      for (const auto& c : p.clock_snapshot().clocks())
        if (c.clock_id() == perfetto::BUILTIN_CLOCK_BOOTTIME) boottimes.push_back(c.timestamp());
  EXPECT_EQ(boottimes, (std::vector<uint64_t>{1000, 1010, 2000, 2010, 3000, 3010}));
}

TEST(InjectionEnv, NamesTheLibraryForCudaAndNvtxAndTheDirectory) {
  InjectionEnvOptions o;
  o.library = "/opt/gpunoise/lib/libgpunoise_cupti.so";
  o.dir = "/tmp/it's";
  o.keep_seconds = 600;
  auto env = InjectionEnvironment(o);
  ASSERT_EQ(env.size(), 4u);
  EXPECT_EQ(env[0], std::make_pair(std::string(model::kCudaInjectionEnv), o.library));
  EXPECT_EQ(env[1], std::make_pair(std::string(model::kNvtxInjectionEnv), o.library));
  EXPECT_EQ(env[2], std::make_pair(std::string(model::kGpuDirEnv), o.dir));
  EXPECT_EQ(env[3], std::make_pair(std::string(model::kGpuKeepSecondsEnv), std::string("600")));
  EXPECT_EQ(FormatShellExports({env[2]}), "export GPUNOISE_GPU_DIR='/tmp/it'\\''s'\n");
  o.nvtx = false;
  o.keep_seconds = 0;
  o.flush_ms = 250;
  env = InjectionEnvironment(o);
  ASSERT_EQ(env.size(), 3u);
  EXPECT_EQ(env[2], std::make_pair(std::string(model::kGpuFlushMsEnv), std::string("250")));
}

TEST(InjectionEnv, LibraryIsFoundBesideTheBinaryOrNamedInTheEnvironment) {
  char tmpl[] = "/tmp/gpunoise-env-test-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  struct RemoveWhenDone {
    std::string dir;
    ~RemoveWhenDone() { std::system(("rm -rf '" + dir + "'").c_str()); }
  } cleanup{dir};
  auto missing = FindInjectionLibrary(dir + "/gpunoise");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("libgpunoise_cupti.so not found beside"), std::string::npos);
  std::ofstream(dir + "/libgpunoise_cupti.so") << "x";
  auto found = FindInjectionLibrary(dir + "/gpunoise");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, dir + "/libgpunoise_cupti.so");
}

}  // namespace
}  // namespace gpunoise::gpu
