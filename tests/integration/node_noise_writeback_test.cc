// Node noise beyond run-queue waits, on real workloads as root (issue 19):
// each test creates what it needs (cgroups with a gn-taxo- prefix), bounds
// its load in time, removes everything, and checks the finding against the
// kernel's own accounting of the same threads.
// This file: writeback stalls.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <vector>
#include <chrono>
#include <initializer_list>
#include <sstream>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "integration/support/cpu_cgroup.h"
#include "integration/support/cpuset_guard.h"
#include "common/clock.h"
#include "export/perfetto/node_tracks.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/track_event_writer.h"
#include "integration/support/privileges.h"
#include "integration/support/workloads.h"
#include "report/report_session.h"
#include "integration/support/node_noise.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

// Tight global dirty limits for a test's few seconds (v1 memory cgroups
// do not throttle writers per cgroup). A guard process puts the ratios back
// when this object goes or the test dies in any way.
class TightDirtyLimits {
 public:
  TightDirtyLimits() {
    auto read = [](const char* f) {
      std::ifstream in(std::string("/proc/sys/vm/") + f);
      std::string v;
      in >> v;
      return v;
    };
    std::string ratio = read("dirty_ratio"), background = read("dirty_background_ratio");
    std::string bytes = read("dirty_bytes"), background_bytes = read("dirty_background_bytes");
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    guard_ = ::fork();
    if (guard_ == 0) {
      ::close(fds[1]);
      char c;
      while (::read(fds[0], &c, 1) > 0) {
      }
      // Writing a ratio clears the bytes form and back: the form in use wins.
      auto put = [](const char* f, const std::string& v) { std::ofstream(std::string("/proc/sys/vm/") + f) << v; };
      if (bytes != "0") put("dirty_bytes", bytes); else put("dirty_ratio", ratio);
      if (background_bytes != "0") put("dirty_background_bytes", background_bytes);
      else put("dirty_background_ratio", background);
      ::_exit(0);
    }
    ::close(fds[0]);
    fd_ = fds[1];
    std::ofstream("/proc/sys/vm/dirty_background_bytes") << (2 << 20);
    std::ofstream("/proc/sys/vm/dirty_bytes") << (4 << 20);
  }
  ~TightDirtyLimits() {
    if (fd_ >= 0) ::close(fd_);
    if (guard_ > 0) ::waitpid(guard_, nullptr, 0);
  }
  bool ok() const { return fd_ >= 0; }

 private:
  pid_t guard_ = -1;
  int fd_ = -1;
};

TEST(WritebackStall, AWriterUnderTightDirtyLimitsIsNamedWithItsBalanceDirtyPagesPauses) {
  GN_REQUIRE_REAL_EBPF();
  std::string inst = "/sys/kernel/tracing/instances/" + UniqueName("dirty");
  ASSERT_EQ(::mkdir(inst.c_str(), 0700), 0);
  std::ofstream(inst + "/buffer_size_kb") << "4096";
  std::ofstream(inst + "/events/writeback/balance_dirty_pages/enable") << "1";
  TempDir dir(OnDisk());
  std::string file = dir.path() + "/checkpoint";
  pid_t writer = 0;
  std::string trace;
  {
    TightDirtyLimits limits;
    ASSERT_TRUE(limits.ok());
    trace = RecordWhile(dir.path(), "dirty.pftrace", "4", [&] {
      writer = ::fork();
      if (writer == 0) {
        // A checkpoint: 96 MiB written as fast as the page cache takes it,
        // for at most 2.5 s.
        std::vector<char> block(1 << 20, 'c');
        FILE* f = std::fopen(file.c_str(), "w");
        auto end = std::chrono::steady_clock::now() + 2500ms;
        for (int i = 0; f && i < 96 && std::chrono::steady_clock::now() < end; ++i)
          std::fwrite(block.data(), 1, block.size(), f);
        if (f) std::fclose(f);
        ::_exit(0);
      }
      int status = 0;
      ::waitpid(writer, &status, 0);
    });
  }
  // ftrace's account of the same pauses (its pause field, ms).
  uint64_t oracle_ms = 0, oracle_n = 0;
  {
    std::ifstream in(inst + "/trace");
    std::string line, tag = "-" + std::to_string(writer) + " ";
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#' || line.find(tag) == std::string::npos) continue;
      size_t p = line.find(" pause=");
      if (p == std::string::npos) continue;
      long pause = std::stol(line.substr(p + 7));
      if (pause <= 0) continue;
      oracle_ms += static_cast<uint64_t>(pause);
      ++oracle_n;
    }
  }
  std::ofstream(inst + "/events/enable") << "0";
  ::rmdir(inst.c_str());
  std::remove(file.c_str());
  ASSERT_GT(oracle_n, 3u) << "the writer should have been paused";

  std::string text;
  analyze::Analysis a = ReportOn(trace, writer, &text);
  const analyze::Finding* f = FindDetector(a, "writeback_stall");
  ASSERT_NE(f, nullptr) << text;
  std::printf("writeback: ftrace %lu pauses, %lu ms; finding %.0f stalls, %.1f ms\n%s\n",
              static_cast<unsigned long>(oracle_n), static_cast<unsigned long>(oracle_ms), f->Metric("stalls"),
              f->Metric("sum_ns") / 1e6, f->title.c_str());
  EXPECT_EQ(f->kind, "balance_dirty_pages");
  EXPECT_EQ(f->focus_tids, std::vector<int32_t>{writer});
  EXPECT_NEAR(f->Metric("stalls"), static_cast<double>(oracle_n), 0.1 * oracle_n + 1);
  EXPECT_NEAR(f->Metric("sum_ns"), oracle_ms * 1e6, 0.1 * oracle_ms * 1e6 + 10e6) << text;
}

}  // namespace
}  // namespace gpunoise::testing
