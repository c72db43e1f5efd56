// Node noise beyond run-queue waits, on real workloads as root (issue 19):
// each test creates what it needs (cgroups with a gn-taxo- prefix), bounds
// its load in time, removes everything, and checks the finding against the
// kernel's own accounting of the same threads.
// This file: memory reclaim.
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

// A tracefs instance of its own (the kernel's ftrace, independent of our
// eBPF) recording vmscan memcg reclaim begin/end; removed on destruction.
class ReclaimOracle {
 public:
  explicit ReclaimOracle(const std::string& name) : dir_("/sys/kernel/tracing/instances/" + name) {
    if (::mkdir(dir_.c_str(), 0700) != 0) {
      dir_.clear();
      return;
    }
    std::ofstream(dir_ + "/buffer_size_kb") << "4096";
    for (const char* e : {"mm_vmscan_memcg_reclaim_begin", "mm_vmscan_memcg_reclaim_end"})
      std::ofstream(dir_ + "/events/vmscan/" + e + "/enable") << "1";
  }
  ~ReclaimOracle() {
    if (dir_.empty()) return;
    std::ofstream(dir_ + "/events/enable") << "0";
    ::rmdir(dir_.c_str());
  }
  bool ok() const { return !dir_.empty(); }
  // Sum of memcg reclaim durations of `pid` (begin/end pairs), and their count.
  std::pair<uint64_t, uint64_t> Sum(pid_t pid) const {
    std::ifstream in(dir_ + "/trace");
    std::string line, tag = "-" + std::to_string(pid) + " ";
    double begin = -1;
    uint64_t total = 0, n = 0;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#' || line.find(tag) == std::string::npos) continue;
      size_t colon = line.find(": mm_vmscan_memcg_reclaim_");
      if (colon == std::string::npos) continue;
      size_t sp = line.rfind(' ', colon - 1);
      double ts = std::stod(line.substr(sp + 1, colon - sp - 1));
      if (line.find("_begin", colon) != std::string::npos) {
        begin = ts;
      } else if (begin >= 0) {
        total += static_cast<uint64_t>((ts - begin) * 1e9);
        ++n;
        begin = -1;
      }
    }
    return {total, n};
  }

 private:
  std::string dir_;
};

TEST(Reclaim, PageCachePressureInALowMemcgLimitIsNamedWithTheTracepointsDurations) {
  GN_REQUIRE_REAL_EBPF();
  std::string mem = "/sys/fs/cgroup/memory/" + UniqueName("mem");
  if (::access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) != 0) GTEST_SKIP() << "no v1 memory controller";
  ASSERT_EQ(::mkdir(mem.c_str(), 0755), 0);
  std::ofstream(mem + "/memory.limit_in_bytes") << "32M";
  ReclaimOracle oracle(UniqueName("oracle"));
  ASSERT_TRUE(oracle.ok());
  TempDir dir(OnDisk());
  std::string file = dir.path() + "/pagecache";
  pid_t writer = 0;
  std::string trace = RecordWhile(dir.path(), "reclaim.pftrace", "4", [&] {
    // A child in the 32 MiB cgroup writes 160 MiB through the page cache:
    // no swap here, so only clean and written-back file pages can go, and
    // the cgroup reclaims them in the writer's own context.
    writer = ::fork();
    if (writer == 0) {
      std::ofstream(mem + "/cgroup.procs") << ::getpid();
      std::vector<char> block(1 << 20, 'x');
      FILE* f = std::fopen(file.c_str(), "w");
      for (int i = 0; f && i < 160; ++i) std::fwrite(block.data(), 1, block.size(), f);
      if (f) std::fclose(f);
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(writer, &status, 0);
  });
  auto [oracle_ns, oracle_n] = oracle.Sum(writer);
  std::remove(file.c_str());
  for (int i = 0; i < 50 && ::rmdir(mem.c_str()) != 0; ++i) std::this_thread::sleep_for(20ms);
  ASSERT_GT(oracle_n, 5u) << "the writer should have reclaimed in its cgroup";

  std::string text;
  analyze::Analysis a = ReportOn(trace, writer, &text);
  const analyze::Finding* f = nullptr;
  for (const auto& x : a.findings)
    if (x.detector == "reclaim" && x.kind == "memcg_reclaim") f = &x;
  ASSERT_NE(f, nullptr) << text;
  std::printf("reclaim: ftrace %lu memcg reclaims, %.1f ms; finding %.0f stalls, %.1f ms (union %.1f ms)\n%s\n",
              static_cast<unsigned long>(oracle_n), oracle_ns / 1e6, f->Metric("stalls"), f->Metric("sum_ns") / 1e6,
              f->cost_ns / 1e6, f->title.c_str());
  EXPECT_EQ(f->focus_tids, std::vector<int32_t>{writer});
  EXPECT_NEAR(f->Metric("stalls"), static_cast<double>(oracle_n), 0.1 * oracle_n + 1);
  EXPECT_NEAR(f->Metric("sum_ns"), static_cast<double>(oracle_ns), 0.1 * oracle_ns) << text;
  uint64_t column = 0;
  for (const auto& c : a.cpus) column += c.reclaim_ns;
  EXPECT_GE(column, f->cost_ns) << "the CPUS table's reclaim column holds it";
}

TEST(Reclaim, TheSameWritesWithoutALimitDoNotReclaim) {
  GN_REQUIRE_REAL_EBPF();
  TempDir dir(OnDisk());
  std::string file = dir.path() + "/pagecache";
  pid_t writer = 0;
  std::string trace = RecordWhile(dir.path(), "free.pftrace", "3", [&] {
    writer = ::fork();
    if (writer == 0) {
      std::vector<char> block(1 << 20, 'x');
      FILE* f = std::fopen(file.c_str(), "w");
      for (int i = 0; f && i < 160; ++i) std::fwrite(block.data(), 1, block.size(), f);
      if (f) std::fclose(f);
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(writer, &status, 0);
  });
  std::remove(file.c_str());
  std::string text;
  analyze::Analysis a = ReportOn(trace, writer, &text);
  EXPECT_EQ(FindDetector(a, "reclaim"), nullptr) << text;
}

}  // namespace
}  // namespace gpunoise::testing
