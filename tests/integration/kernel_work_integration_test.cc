// Kernel work on the focus threads' CPUs (issue 19: ipi_tlb, timer,
// workqueue), on real workloads as root. Each workload runs in a child
// process for a bounded time and reports its threads and the kernel's own
// counts (/proc/interrupts, the timerfd's expirations, the writes it made)
// through a pipe; the findings are checked against those.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <thread>

#include "analyze/timeline_builder.h"
#include "import/trace_reader.h"
#include "integration/support/host_noise.h"
#include "integration/support/privileges.h"
#include "integration/support/run_in_child.h"
#include "integration/support/workloads.h"
#include "report/report_session.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

pid_t Gettid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

void Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::sched_setaffinity(0, sizeof(set), &set);
}

void SpinFor(std::chrono::milliseconds d) {
  auto end = Clock::now() + d;
  volatile uint64_t x = 0;
  while (Clock::now() < end) x = x + 1;
}

// CPU `cpu`'s count on the /proc/interrupts line `label` ("TLB").
uint64_t InterruptCount(const char* label, int cpu) {
  std::ifstream in("/proc/interrupts");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string name;
    s >> name;
    if (name != std::string(label) + ":") continue;
    uint64_t n = 0;
    for (int i = 0; i <= cpu; ++i) s >> n;
    return n;
  }
  return 0;
}


std::string RecordWhile(const std::string& dir, const char* name, const std::function<void()>& workload) {
  std::string out = dir + "/" + name;
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "4", "-o", out});
  EXPECT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
  workload();
  EXPECT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  std::fprintf(stderr, "%s\n", rec.stderr_text().c_str());
  return out;
}

// Runs `body` in a child process (its own session) and returns what it
// wrote into the POD it was given (support/run_in_child.h).
template <typename T>
T InChild(const std::function<void(T*)>& body) {
  return RunInChild<T>([&](T& r) {
    body(&r);
    return true;
  }).value_or(T{});
}

analyze::Analysis ReportOn(const std::string& trace, pid_t focus, std::string* text,
                           std::initializer_list<const char*> thresholds = {}) {
  report::ReportOptions options;
  options.trace_path = trace;
  options.analysis.focus = {std::to_string(focus)};
  for (const char* t : thresholds) EXPECT_TRUE(options.analysis.thresholds.Set(t).ok()) << t;
  auto result = report::RunReport(options);
  EXPECT_TRUE(result.ok()) << result.error().message;
  if (!result.ok()) return {};
  *text = result->output;
  return std::move(result->analysis);
}

const analyze::Finding* FindDetector(const analyze::Analysis& a, std::string_view detector) {
  for (const auto& f : a.findings)
    if (f.detector == detector) return &f;
  return nullptr;
}

void Print(const analyze::Finding& f) {
  std::printf("%s\n", f.title.c_str());
  for (const auto& e : f.evidence) std::printf("  - %s\n", e.c_str());
}

struct UnmapRun {
  pid_t focus = 0, unmapper = 0;
  uint64_t unmaps = 0;
  uint64_t tlb_before = 0, tlb_after = 0;  // CPU 0's "TLB shootdowns"
};

// The focus thread spins on CPU 0; a second thread of the same process maps,
// touches and unmaps a shared page on CPU 1 for 1.5 s (`unmap` false: it
// sleeps instead). Each unmap flushes the page from CPU 0's TLB too, since
// the process is running there.
UnmapRun RunUnmapper(bool unmap) {
  return InChild<UnmapRun>([unmap](UnmapRun* r) {
    std::atomic<bool> ready{false};
    std::thread focus([&] {
      pthread_setname_np(pthread_self(), "gn-kw-focus");
      Pin(0);
      r->focus = Gettid();
      ready = true;
      SpinFor(2200ms);
    });
    std::thread unmapper([&] {
      pthread_setname_np(pthread_self(), "gn-kw-unmap");
      Pin(1);
      r->unmapper = Gettid();
      while (!ready) std::this_thread::sleep_for(1ms);
      std::this_thread::sleep_for(200ms);
      r->tlb_before = InterruptCount("TLB", 0);
      auto end = Clock::now() + 1500ms;
      while (Clock::now() < end) {
        if (!unmap) {
          std::this_thread::sleep_for(10ms);
          continue;
        }
        void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) break;
        *static_cast<volatile char*>(p) = 1;
        ::munmap(p, 4096);
        ++r->unmaps;
      }
      r->tlb_after = InterruptCount("TLB", 0);
    });
    focus.join();
    unmapper.join();
  });
}

TEST(IpiTlb, TheFocusProcessesOwnUnmappingThreadIsNamedAsTheSenderOfItsShootdowns) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  TempDir dir;
  UnmapRun run;
  std::string trace = RecordWhile(dir.path(), "unmap.pftrace", [&] { run = RunUnmapper(true); });
  ASSERT_NE(run.focus, 0) << "the workload did not run";
  std::string text;
  analyze::Analysis a = ReportOn(trace, run.focus, &text);
  const analyze::Finding* f = FindDetector(a, "ipi_tlb");
  ASSERT_NE(f, nullptr) << text;
  uint64_t tlb = run.tlb_after - run.tlb_before;
  std::printf("ipi_tlb: %lu unmaps, CPU 0 TLB shootdowns +%lu (/proc/interrupts); finding %.0f IPIs, %.2f ms\n",
              static_cast<unsigned long>(run.unmaps), static_cast<unsigned long>(tlb), f->Metric("ipis"),
              f->cost_ns / 1e6);
  Print(*f);
  EXPECT_EQ(f->kind, "tlb_shootdown");
  EXPECT_EQ(f->culprit_tid, run.unmapper) << text;
  EXPECT_EQ(f->Metric("own_process"), 1);
  EXPECT_EQ(f->cpus, std::vector<uint32_t>{0});
  EXPECT_EQ(f->focus_tids, std::vector<int32_t>{run.focus});
  // The kernel's own count of shootdowns CPU 0 served over the unmapping
  // (all senders): the finding counts those from this thread that
  // interrupted the focus thread, so at most that many, and most of them.
  EXPECT_LE(f->Metric("ipis"), 1.02 * static_cast<double>(tlb) + 20) << text;
  EXPECT_GE(f->Metric("ipis"), 0.5 * static_cast<double>(tlb)) << text;
  EXPECT_LE(f->Metric("ipis"), static_cast<double>(run.unmaps) + 20);
}

TEST(IpiTlb, ASleepingSecondThreadSendsNone) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  TempDir dir;
  UnmapRun run;
  HostNoise host(0);
  std::string trace = RecordWhile(dir.path(), "quiet.pftrace", [&] { run = RunUnmapper(false); });
  ASSERT_NE(run.focus, 0) << "the workload did not run";
  std::string text;
  analyze::Analysis a = ReportOn(trace, run.focus, &text);
  EXPECT_EQ(FindDetector(a, "ipi_tlb"), nullptr) << text;
  // A vCPU the host takes away in a timer callback or a kworker's run
  // stretches it (a CI host stole enough of CPU 0 for a timer finding): the
  // other kernel work is judged only on a CPU the hypervisor left alone.
  if (!host.Quiet()) {
    std::printf("note: not quiet (%s): checked only that no TLB shootdown is blamed\n", host.Describe().c_str());
    return;
  }
  EXPECT_EQ(FindDetector(a, "timer"), nullptr) << text;
  EXPECT_EQ(FindDetector(a, "workqueue"), nullptr) << text;
}

struct TimerRun {
  pid_t focus = 0, hog = 0;
  uint64_t expirations = 0;  // the timerfd's own count
};

// The focus thread spins on CPU 0 for 2.2 s while a process pinned to CPU 0
// too rearms a 50 us periodic timerfd by reading it for 1.5 s: its hrtimer
// keeps expiring on CPU 0, over the focus thread.
TimerRun RunTimerStorm() {
  return InChild<TimerRun>([](TimerRun* r) {
    pthread_setname_np(pthread_self(), "gn-kw-focus");
    Pin(0);
    r->focus = Gettid();
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_t hog = ::fork();
    if (hog == 0) {
      ::close(fds[0]);
      pthread_setname_np(pthread_self(), "gn-kw-timer");
      TimerRun mine{};
      mine.hog = Gettid();
      int tfd = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
      std::this_thread::sleep_for(200ms);
      itimerspec spec{};
      spec.it_interval.tv_nsec = 50'000;
      spec.it_value.tv_nsec = 50'000;
      if (tfd >= 0 && ::timerfd_settime(tfd, 0, &spec, nullptr) == 0) {
        auto end = Clock::now() + 1500ms;
        uint64_t n = 0;
        while (Clock::now() < end && ::read(tfd, &n, sizeof(n)) == sizeof(n)) mine.expirations += n;
      }
      ssize_t w = ::write(fds[1], &mine, sizeof(mine));
      ::_exit(w == sizeof(mine) ? 0 : 1);
    }
    ::close(fds[1]);
    SpinFor(2200ms);
    TimerRun theirs{};
    if (::read(fds[0], &theirs, sizeof(theirs)) == sizeof(theirs)) {
      r->hog = theirs.hog;
      r->expirations = theirs.expirations;
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(hog, &status, 0);
  });
}

TEST(Timer, AnHrtimerStormOnTheFocusCpuIsNamedByItsCallback) {
  GN_REQUIRE_REAL_EBPF();
  TempDir dir;
  TimerRun run;
  std::string trace = RecordWhile(dir.path(), "timers.pftrace", [&] { run = RunTimerStorm(); });
  ASSERT_NE(run.focus, 0) << "the workload did not run";
  ASSERT_GT(run.expirations, 1000u) << "the timerfd barely fired";
  std::string text;
  analyze::Analysis a = ReportOn(trace, run.focus, &text);
  const analyze::Finding* f = nullptr;
  for (const auto& x : a.findings)
    if (x.detector == "timer" && x.culprit == "timerfd_tmrproc") f = &x;
  ASSERT_NE(f, nullptr) << text;
  std::printf("timer: %lu timerfd expirations; finding %.0f callbacks, %.2f ms (%.2f%%)\n",
              static_cast<unsigned long>(run.expirations), f->Metric("callbacks"), f->cost_ns / 1e6,
              100 * f->cost_share);
  Print(*f);
  EXPECT_EQ(f->cpus, std::vector<uint32_t>{0});
  EXPECT_EQ(f->focus_tids, std::vector<int32_t>{run.focus});
  // Each read rearms the timer once and each expiry is one callback: the
  // callbacks that hit the focus thread are at most the expirations. How
  // many of them hit it depends on how often it ran on CPU 0 (on the shared
  // development VM other builds kept it waiting most of the time: 25% of
  // the expirations hit it, with it running about 40% of the time).
  EXPECT_LE(f->Metric("callbacks"), 1.02 * static_cast<double>(run.expirations) + 20) << text;
  EXPECT_GE(f->Metric("callbacks"), 0.1 * static_cast<double>(run.expirations)) << text;
}

struct RefreshRun {
  pid_t focus = 0, writer = 0;
  uint64_t writes = 0;
};

// The focus thread spins on CPU 0; a second thread on CPU 1 writes
// /proc/sys/vm/stat_refresh for 1.5 s: each write queues refresh_vm_stats on
// every CPU (schedule_on_each_cpu, mm/vmstat.c) and waits for them, so a
// kworker keeps preempting the focus thread on CPU 0.
RefreshRun RunStatRefresh() {
  return InChild<RefreshRun>([](RefreshRun* r) {
    std::atomic<bool> ready{false};
    std::thread focus([&] {
      pthread_setname_np(pthread_self(), "gn-kw-focus");
      Pin(0);
      r->focus = Gettid();
      ready = true;
      SpinFor(2200ms);
    });
    std::thread writer([&] {
      pthread_setname_np(pthread_self(), "gn-kw-refresh");
      Pin(1);
      r->writer = Gettid();
      while (!ready) std::this_thread::sleep_for(1ms);
      std::this_thread::sleep_for(200ms);
      auto end = Clock::now() + 1500ms;
      while (Clock::now() < end) {
        std::ofstream out("/proc/sys/vm/stat_refresh");
        out << "1\n";
        out.flush();
        if (!out) break;
        ++r->writes;
      }
    });
    focus.join();
    writer.join();
  });
}

TEST(Workqueue, WorkItemsQueuedOnTheFocusCpuAreNamedByTheirFunction) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  if (::access("/proc/sys/vm/stat_refresh", W_OK) != 0) GTEST_SKIP() << "no /proc/sys/vm/stat_refresh";
  TempDir dir;
  RefreshRun run;
  std::string trace = RecordWhile(dir.path(), "work.pftrace", [&] { run = RunStatRefresh(); });
  ASSERT_NE(run.focus, 0) << "the workload did not run";
  ASSERT_GT(run.writes, 100u);
  std::string text;
  // refresh_vm_stats is short (5-50 us an item on this VM): a few hundred
  // of them cost the focus thread 1.5-16 ms, around the default thresholds,
  // which are for real noise. The test checks the attribution (function,
  // CPU, count) below them.
  analyze::Analysis a = ReportOn(trace, run.focus, &text, {"workqueue.min_delay=200us", "workqueue.min_share=0.01%"});
  const analyze::Finding* f = nullptr;
  for (const auto& x : a.findings)
    if (x.detector == "workqueue" && x.culprit == "refresh_vm_stats") f = &x;
  ASSERT_NE(f, nullptr) << text;
  std::printf("workqueue: %lu stat_refresh writes; finding %.0f work items, %.2f ms waited (%.2f%%)\n",
              static_cast<unsigned long>(run.writes), f->Metric("work_items"), f->cost_ns / 1e6,
              100 * f->cost_share);
  Print(*f);
  EXPECT_EQ(f->cpus, std::vector<uint32_t>{0});
  EXPECT_EQ(f->focus_tids, std::vector<int32_t>{run.focus});
  // One item per write on CPU 0; those that made the focus thread wait.
  EXPECT_LE(f->Metric("work_items"), static_cast<double>(run.writes) + 5) << text;
  EXPECT_GE(f->Metric("work_items"), 0.1 * static_cast<double>(run.writes)) << text;
}


// Attaching and detaching tracepoints patches kernel text, and each patch
// IPIs every CPU (text_poke's do_sync_core), whose callbacks ran while
// csd_function_exit was half-patched: before the collector followed the
// recording's gate, a quiet 3 s recording on a 2-CPU VM held such
// callbacks before its start and left 38-126 callbacks unpaired. Now only a
// callback running at the instant the gate opens can lose its entry (at
// most the kernel's nesting depth, 4 slots, per CPU).
TEST(KernelWork, OnlyCallbacksInsideTheRecordingWindowAreRecordedOrCountedUnpaired) {
  GN_REQUIRE_REAL_EBPF();
  TempDir dir;
  std::string trace = dir.path() + "/quiet.pftrace";
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "3", "-o", trace});
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();

  analyze::TimelineBuilder builder;
  import::TraceReader reader(builder, {});
  ASSERT_TRUE(reader.ReadFile(trace).ok());
  analyze::Timeline t = builder.Finish();
  ASSERT_TRUE(t.session.has_value());
  const model::SessionInfo& s = *t.session;
  ASSERT_LT(s.start_ts, s.end_ts);
  size_t callbacks = 0;
  for (const auto& w : t.kernel_work) {
    EXPECT_GE(w.start, s.start_ts) << w.function << " on CPU " << w.cpu;
    EXPECT_LE(w.end, s.end_ts) << w.function << " on CPU " << w.cpu;
    if (w.kind != model::KernelWorkKind::kIpiSend) ++callbacks;
  }
  EXPECT_GT(callbacks, 0u) << "not even a tick's hrtimer in 3 s";
  uint64_t unpaired = 0;
  for (const auto& m : s.map_losses)
    if (m.collector == "kwork" && m.kind == model::MapLossKind::kUnpaired) unpaired += m.count;
  std::printf("kwork: %zu callbacks, %lu unpaired\n", callbacks, static_cast<unsigned long>(unpaired));
  EXPECT_LE(unpaired, 4 * static_cast<uint64_t>(s.cpus.size())) << rec.stderr_text();
}

}  // namespace
}  // namespace gpunoise::testing
