// The cross-node report's CPU-side comparison on real recordings, as root:
// five recordings of this machine in sequential windows, each under its own
// --machine-name, stand in for five nodes; in one of them a hog shares the
// focus thread's CPU. The report names that one by its robust score; with
// two machines it says no robust score is possible.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "integration/support/privileges.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

void Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::sched_setaffinity(0, sizeof(set), &set);
}

void Spin(std::chrono::microseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
}

// "gn-focus" spins 1.2 s on CPU 1, beside three "gn-hog" threads when `hog`,
// so it waits about 75% of its time. In a session of its own at autogroup
// nice -19, which does not keep other work off CPU 1: with a compiler beside
// it a node without hogs waited 48.7%. One stray competitor makes at most
// 50%, so the hogs' node still stands out.
void RunFocus(bool hog) {
  pid_t child = ::fork();
  if (child == 0) {
    ::setsid();
    std::ofstream("/proc/self/autogroup") << "-19";
    std::atomic<bool> stop{false};
    std::vector<std::thread> hogs;
    for (int i = 0; hog && i < 3; ++i)
      hogs.emplace_back([&] {
        pthread_setname_np(pthread_self(), "gn-hog");
        Pin(1);
        while (!stop) Spin(1000us);
      });
    std::thread focus([&] {
      pthread_setname_np(pthread_self(), "gn-focus");
      Pin(1);
      Spin(1200ms);
    });
    focus.join();
    stop = true;
    for (auto& h : hogs) h.join();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
}


// Whole numbers after `"key": ` in JSON text (the report's own layout),
// from `from` on.
int64_t JsonInt(const std::string& json, const std::string& key, size_t from = 0) {
  size_t at = json.find("\"" + key + "\": ", from);
  if (at == std::string::npos) return 0;
  return std::strtoll(json.c_str() + at + key.size() + 4, nullptr, 10);
}

// The share of its time gn-focus waited in run queues, by the node's own
// report (-1 when the report failed or saw no focus thread).
double FocusWaitShare(const std::string& trace) {
  ChildProcess report({GpunoiseBinary(), "report", "--json", "--focus", "gn-focus", trace});
  if (report.Wait(120s) != 0) return -1;
  const std::string json = report.stdout_text();
  size_t threads = json.find("\"threads\": [");
  if (threads == std::string::npos) return -1;
  int64_t observed = JsonInt(json, "observed_ns", threads), waited = JsonInt(json, "wait_ns", threads);
  return observed > 0 ? static_cast<double>(waited) / static_cast<double>(observed) : -1;
}

std::string RecordOnce(const std::string& dir, const std::string& name, bool hog) {
  std::string out = dir + "/" + name + ".pftrace";
  std::filesystem::remove(out);
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "2", "--machine-name", name, "-o", out});
  EXPECT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
  RunFocus(hog);
  EXPECT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  return out;
}

// A node without hogs stands in for a quiet peer; when something outside
// the test (the CI machine's own work) kept gn-focus waiting a tenth of its
// time, that window is no quiet peer and is recorded again, at most twice,
// saying so. Two such windows of five can spread the fleet's MAD enough to
// hide the hog node (CI once named no straggler here). The hog node must
// wait most of its time: that is the test's premise, not noise.
std::string RecordNode(const std::string& dir, const std::string& name, bool hog) {
  for (int attempt = 1;; ++attempt) {
    std::string out = RecordOnce(dir, name, hog);
    double share = FocusWaitShare(out);
    if (hog) {
      EXPECT_GT(share, 0.5) << name << ": three hogs on gn-focus's CPU, yet it waited only " << share;
      return out;
    }
    EXPECT_GE(share, 0) << name << ": its own report saw no gn-focus";
    if (share < 0.1 || attempt == 3) return out;
    std::printf("%s: gn-focus waited %.1f%% of its time with no hog (this machine was busy); recording again\n",
                name.c_str(), share * 100);
  }
}

// The "CPU SIDE" table of a fleet report, to say first why a check failed
// (CI keeps a few lines after each failure).
std::string CpuSide(const std::string& out) {
  size_t at = out.find("CPU SIDE");
  return at == std::string::npos ? out : out.substr(at, out.find("\n\n", at) - at);
}

TEST(FleetCpuIntegration, OfFiveRecordingsTheOneWithAHogIsNamedAndTwoGiveNoRobustScore) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  TempDir dir;
  std::vector<std::string> traces;
  for (int i = 0; i < 5; ++i) traces.push_back(RecordNode(dir.path(), "node" + std::to_string(i), i == 3));

  std::vector<std::string> args = {GpunoiseBinary(), "report"};
  args.insert(args.end(), traces.begin(), traces.end());
  args.insert(args.end(), {"--focus", "gn-focus"});
  ChildProcess five(args);
  ASSERT_EQ(five.Wait(120s), 0) << five.stderr_text();
  std::string out = five.stdout_text();
  std::printf("%s", out.c_str());
  EXPECT_NE(out.find("gpunoise fleet report: 5 machines"), std::string::npos) << out;
  EXPECT_NE(out.find(" 1. [straggler] node3 stands out on the CPU side"), std::string::npos)
      << CpuSide(out) << "\n" << out;
  EXPECT_NE(out.find("gn-hog"), std::string::npos) << "its own finding as the cause:\n" << out;

  ChildProcess two({GpunoiseBinary(), "report", traces[0], traces[3], "--focus", "gn-focus"});
  ASSERT_EQ(two.Wait(120s), 0) << two.stderr_text();
  std::string out2 = two.stdout_text();
  EXPECT_NE(out2.find("no robust score is possible with 2 machines"), std::string::npos) << out2;
  EXPECT_EQ(out2.find("[straggler]"), std::string::npos) << out2;
}

int64_t RealtimeNs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// RDMA counters as /sys/class/infiniband lays them out, in a tree of the
// test's own (GPUNOISE_SYSFS_ROOT): this VM has no HCA.
void RdmaCounter(const std::string& root, const std::string& name, uint64_t v) {
  std::string d = root + "/class/infiniband/mlx5_0/ports/1/counters";
  std::filesystem::create_directories(d);
  std::ofstream(d + "/" + name) << v << "\n";
}

TEST(RecordRdma, ARecordingCarriesWhatEachRdmaPortCountedAndTheReportReadsIt) {
  GN_REQUIRE_REAL_EBPF();
  TempDir dir;
  const std::string sysfs = dir.path() + "/sys";
  RdmaCounter(sysfs, "port_rcv_errors", 10);
  RdmaCounter(sysfs, "port_xmit_wait", 5000);
  std::string out = dir.path() + "/rdma.pftrace";
  ChildProcess rec({"/usr/bin/env", "GPUNOISE_SYSFS_ROOT=" + sysfs, GpunoiseBinary(), "record", "-d", "2", "-o", out});
  ASSERT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
  std::this_thread::sleep_for(300ms);
  RdmaCounter(sysfs, "port_rcv_errors", 42);  // 32 errors during the recording
  RdmaCounter(sysfs, "port_xmit_wait", 9000);
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  ChildProcess report({GpunoiseBinary(), "report", out, "--json"});
  ASSERT_EQ(report.Wait(60s), 0) << report.stderr_text();
  std::string json = report.stdout_text();
  EXPECT_EQ(JsonInt(json, "rdma_ports"), 1) << json.substr(json.find("cpu_side"));
  EXPECT_EQ(JsonInt(json, "rdma_errors"), 32);
  EXPECT_EQ(JsonInt(json, "rdma_xmit_wait"), 4000);
}

TEST(RecordStartAt, TheGateOpensAtTheWallClockInstantGiven) {
  GN_REQUIRE_REAL_EBPF();
  TempDir dir;
  std::string out = dir.path() + "/later.pftrace";
  const int64_t target = RealtimeNs() + 3'000'000'000;  // collectors attach meanwhile
  char at[64];
  {
    time_t s = static_cast<time_t>(target / 1'000'000'000);
    struct tm tm {};
    ::gmtime_r(&s, &tm);
    std::snprintf(at, sizeof(at), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(target % 1'000'000'000 / 1'000'000));
  }
  ChildProcess rec({GpunoiseBinary(), "record", "--start-at", at, "-d", "1", "-o", out});
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  const int64_t ended = RealtimeNs();
  EXPECT_NE(rec.stderr_text().find("recording starts at"), std::string::npos) << rec.stderr_text();
  EXPECT_GE(ended, target + 1'000'000'000) << "1 s counted from the gate";

  // The first event, on the wall clock: right after the instant asked for.
  ChildProcess report({GpunoiseBinary(), "report", out, "--json"});
  ASSERT_EQ(report.Wait(60s), 0) << report.stderr_text();
  std::string json = report.stdout_text();
  int64_t first_event = JsonInt(json, "start_ns") + JsonInt(json, "realtime_minus_boottime_ns");
  std::printf("asked %s; first event %.3f ms after it\n", at, static_cast<double>(first_event - target) / 1e6);
  EXPECT_GE(first_event, target - 2'000'000);
  EXPECT_LT(first_event, target + 200'000'000);

  ChildProcess bad({GpunoiseBinary(), "record", "--start-at", "tomorrow", "-d", "1", "-o", out + ".bad"});
  EXPECT_EQ(bad.Wait(20s), 2);
  EXPECT_NE(bad.stderr_text().find("'tomorrow'"), std::string::npos) << bad.stderr_text();
}

}  // namespace
}  // namespace gpunoise::testing
