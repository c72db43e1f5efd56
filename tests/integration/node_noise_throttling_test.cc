// Node noise beyond run-queue waits, on real workloads as root (issue 19):
// each test creates what it needs (cgroups with a gn-taxo- prefix), bounds
// its load in time, removes everything, and checks the finding against the
// kernel's own accounting of the same threads.
// This file: CPU-quota throttling.
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

struct BusyRun {
  pid_t tid = 0;
  uint64_t run_delay = 0;  // schedstat, over the busy part
  model::CgroupCpuStat before, after;
};

// A child process (its own session) joins `cg` and runs one busy thread for
// `busy`; it reports the thread's schedstat run delay and the cgroup's
// cpu.stat around it.
BusyRun RunBusyIn(const CpuCgroup& cg, std::chrono::milliseconds busy) {
  return RunInChild<BusyRun>([&](BusyRun& r) {
    if (!cg.Join(::getpid())) return false;
    std::thread t([&] {
      pthread_setname_np(pthread_self(), "gn-throttled");
      r.tid = Gettid();
      r.before = cg.Stat();
      uint64_t d0 = RunDelayNs(r.tid);
      Spin(busy);
      r.run_delay = RunDelayNs(r.tid) - d0;
      r.after = cg.Stat();
    });
    t.join();
    return true;
  }).value_or(BusyRun{});
}

TEST(CpuThrottling, AQuotaIsNamedWithTheThrottledTimeOfTheSchedDataAndCpuStat) {
  GN_REQUIRE_REAL_EBPF();
  CpuCgroup cg(UniqueName("quota"), 20000, 100000);  // 20% of one CPU
  ASSERT_TRUE(cg.ok()) << cg.error();
  TempDir dir;
  BusyRun run;
  std::string trace = RecordWhile(dir.path(), "throttled.pftrace", "4", [&] { run = RunBusyIn(cg, 2000ms); });
  ASSERT_NE(run.tid, 0) << "the workload did not run";
  uint64_t nr_throttled = run.after.nr_throttled - run.before.nr_throttled;
  uint64_t throttled_ns = run.after.throttled_ns - run.before.throttled_ns;
  ASSERT_GE(nr_throttled, 10u) << "2 s at 20% of a CPU should be throttled in most of its 20 periods";

  report::ReportOptions options;
  options.trace_path = trace;
  options.analysis.focus = {std::to_string(run.tid)};
  auto result = report::RunReport(options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  const analyze::Analysis& a = result->analysis;
  const analyze::Finding* f = FindDetector(a, "cpu_throttling");
  ASSERT_NE(f, nullptr) << result->output;
  EXPECT_NE(f->culprit.find(cg.path()), std::string::npos) << f->culprit;
  EXPECT_EQ(f->culprit_kind, "cgroup");
  EXPECT_EQ(f->focus_tids, std::vector<int32_t>{run.tid});
  EXPECT_EQ(f->Metric("quota_us"), 20000);
  EXPECT_EQ(f->Metric("period_us"), 100000);
  EXPECT_EQ(f->Metric("cgroup_version"), cg.version());
  double sched = static_cast<double>(run.run_delay);
  double found = static_cast<double>(f->cost_ns);
  std::printf("throttled: finding %.1f ms in %.0f waits; schedstat run delay %.1f ms; cpu.stat %lu periods, "
              "throttled_time %.1f ms; finding's cpu.stat %.0f periods, %.1f ms\n",
              found / 1e6, f->Metric("waits"), sched / 1e6, static_cast<unsigned long>(nr_throttled),
              static_cast<double>(throttled_ns) / 1e6, f->Metric("nr_throttled"),
              f->Metric("cpu_stat_throttled_ns") / 1e6);
  // The scheduler's evidence: the runnable gaps the finding sums are the
  // time the kernel itself counted the thread runnable and not running.
  EXPECT_NEAR(found, sched, 0.1 * sched) << result->output;
  // The counters the recording sampled are the cgroup's own: the window
  // (the whole recording) holds the test's reads, within one period.
  EXPECT_NEAR(f->Metric("nr_throttled"), static_cast<double>(nr_throttled), 0.1 * nr_throttled + 1);
  EXPECT_NEAR(f->Metric("cpu_stat_throttled_ns"), static_cast<double>(throttled_ns), 0.1 * throttled_ns + 100e6);
  // The CPUS table's throttled column sums the same waits.
  uint64_t column = 0;
  for (const auto& c : a.cpus) column += c.throttled_ns;
  EXPECT_EQ(column, f->cost_ns);
  // A throttled thread is not delayed by whatever ran meanwhile: the quota,
  // not a task, is the first finding.
  EXPECT_EQ(a.findings.front().detector, "cpu_throttling") << result->output;
}

TEST(CpuThrottling, ABusyThreadWithoutAQuotaIsNotThrottled) {
  GN_REQUIRE_REAL_EBPF();
  CpuCgroup cg(UniqueName("noquota"), 0, 100000);
  ASSERT_TRUE(cg.ok()) << cg.error();
  TempDir dir;
  BusyRun run;
  std::string trace = RecordWhile(dir.path(), "free.pftrace", "3", [&] { run = RunBusyIn(cg, 1200ms); });
  ASSERT_NE(run.tid, 0);
  report::ReportOptions options;
  options.trace_path = trace;
  options.analysis.focus = {std::to_string(run.tid)};
  auto result = report::RunReport(options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(FindDetector(result->analysis, "cpu_throttling"), nullptr) << result->output;
  for (const auto& c : result->analysis.cpus) EXPECT_EQ(c.throttled_ns, 0u);
}

}  // namespace
}  // namespace gpunoise::testing
