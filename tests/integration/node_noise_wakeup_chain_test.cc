// Node noise beyond run-queue waits, on real workloads as root (issue 19):
// each test creates what it needs (cgroups with a gn-taxo- prefix), bounds
// its load in time, removes everything, and checks the finding against the
// kernel's own accounting of the same threads.
// This file: wake-up chains.
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
#include "integration/support/run_in_child.h"
#include "integration/support/workloads.h"
#include "report/report_session.h"
#include "integration/support/node_noise.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

struct ChainRun {
  pid_t a = 0, b = 0, focus = 0, hog = 0;
  uint64_t b_run_delay = 0;
  int rounds = 0;
};

// A (CPU 0) wakes B (CPU 1) through a pipe every 20 ms; B wakes the focus
// thread (CPU 0) through another. With `hog`, a nice -5 hog shares CPU 1
// with B at nice 19, so B's wakeups wait; without, B is SCHED_FIFO and runs
// at once. In a child of its own session (autogroup nice -19, so the
// machine's other work weighs little against it).
ChainRun RunChain(bool hog, int rounds) {
  return RunInChild<ChainRun>([&](ChainRun& r) {
    std::ofstream("/proc/self/autogroup") << "-19";
    r.rounds = rounds;
    int ab[2], bf[2];
    if (::pipe(ab) != 0 || ::pipe(bf) != 0) return false;
    std::atomic<bool> stop{false};
    std::thread h;
    if (hog)
      h = std::thread([&] {
        pthread_setname_np(pthread_self(), "gn-hog");
        Pin({1});
        ::setpriority(PRIO_PROCESS, static_cast<id_t>(Gettid()), -5);
        r.hog = Gettid();
        while (!stop) Spin(1000us);
      });
    std::thread b([&] {
      pthread_setname_np(pthread_self(), "gn-stage-b");
      Pin({1});
      r.b = Gettid();
      if (hog) {
        ::setpriority(PRIO_PROCESS, static_cast<id_t>(r.b), 19);
      } else {
        sched_param p{};
        p.sched_priority = 10;
        ::sched_setscheduler(0, SCHED_FIFO, &p);
      }
      uint64_t d0 = RunDelayNs(r.b);
      char c;
      for (int i = 0; i < rounds && ::read(ab[0], &c, 1) == 1; ++i) (void)!::write(bf[1], &c, 1);
      r.b_run_delay = RunDelayNs(r.b) - d0;
    });
    std::thread focus([&] {
      pthread_setname_np(pthread_self(), "gn-chained");
      Pin({0});
      r.focus = Gettid();
      char c;
      for (int i = 0; i < rounds && ::read(bf[0], &c, 1) == 1; ++i) Spin(100us);
    });
    std::thread a([&] {
      pthread_setname_np(pthread_self(), "gn-stage-a");
      Pin({0});
      r.a = Gettid();
      std::this_thread::sleep_for(100ms);  // everyone is set up
      for (int i = 0; i < rounds; ++i) {
        std::this_thread::sleep_for(20ms);
        (void)!::write(ab[1], "x", 1);
      }
    });
    a.join();
    b.join();
    focus.join();
    stop = true;
    if (h.joinable()) h.join();
    return true;
  }).value_or(ChainRun{});
}

TEST(WakeupChain, AHogDelayingTheMiddleThreadNamesTheLateLink) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  TempDir dir;
  ChainRun run;
  std::string trace = RecordWhile(dir.path(), "chain.pftrace", "5", [&] { run = RunChain(true, 100); });
  ASSERT_NE(run.focus, 0) << "the workload did not run";
  std::string text;
  analyze::Analysis a = ReportOn(trace, run.focus, &text);
  const analyze::Finding* f = FindDetector(a, "wakeup_chain");
  ASSERT_NE(f, nullptr) << text;
  std::printf("chain: B's schedstat run delay %.1f ms; finding: %.0f late links, %.1f ms waited, %.1f ms blocked; "
              "culprit %s\n",
              run.b_run_delay / 1e6, f->Metric("chains"), f->Metric("link_wait_ns") / 1e6, f->cost_ns / 1e6,
              f->culprit.c_str());
  std::printf("%s\n", f->title.c_str());
  for (const auto& e : f->evidence) std::printf("  - %s\n", e.c_str());
  EXPECT_EQ(f->Metric("late_waker_tid"), run.b) << "the late link is B's";
  EXPECT_EQ(f->culprit_tid, run.hog) << text;
  EXPECT_EQ(f->focus_tids, std::vector<int32_t>{run.focus});
  EXPECT_EQ(f->cpus, std::vector<uint32_t>{1});
  EXPECT_NE(f->title.find("gn-stage-a"), std::string::npos) << "A is named as the first link: " << f->title;
  // B's waits in the chains are B's runnable time as the kernel counts it
  // (B does nothing else): at most all of it, and most of it.
  double links = f->Metric("link_wait_ns"), sched = static_cast<double>(run.b_run_delay);
  EXPECT_LE(links, 1.1 * sched) << text;
  EXPECT_GE(links, 0.5 * sched) << text;
  // Not every round waits a millisecond (the hog's slice may end first):
  // on the development VM about half did.
  EXPECT_GE(f->Metric("chains"), 10);
  EXPECT_LE(f->Metric("chains"), run.rounds);
}

TEST(WakeupChain, APromptMiddleThreadIsNoChain) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  TempDir dir;
  ChainRun run;
  std::string trace = RecordWhile(dir.path(), "prompt.pftrace", "5", [&] { run = RunChain(false, 100); });
  ASSERT_NE(run.focus, 0);
  std::string text;
  analyze::Analysis a = ReportOn(trace, run.focus, &text);
  EXPECT_EQ(FindDetector(a, "wakeup_chain"), nullptr) << text;
  std::printf("prompt chain: B's schedstat run delay %.2f ms over %d rounds\n", run.b_run_delay / 1e6, run.rounds);
}

}  // namespace
}  // namespace gpunoise::testing
