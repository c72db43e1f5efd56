// The recorder's drain yields to the job (record/drain_priority.h): it runs
// under SCHED_IDLE while its buffers have room, and goes back to
// SCHED_OTHER, losing nothing or next to nothing, when the node leaves it no
// CPU.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "integration/support/net_load.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

struct Raises {
  int all = -1, late = -1, doorbell = -1;
};

// "drain: SCHED_IDLE while its buffers had room (from +T s); back to
// SCHED_OTHER N times (M for a late turn, K for a doorbell), ...";
// all -1 without that line.
Raises DrainRaises(const std::string& summary) {
  std::smatch m;
  static const std::regex line(
      R"(drain: SCHED_IDLE while its buffers had room \([^)]*\); back to SCHED_OTHER (\d+) times \((\d+) for a late turn, (\d+) for a doorbell\))");
  if (!std::regex_search(summary, m, line)) return {};
  return {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
}

// The node line's kernel work: {IPI callbacks, entries lost}; {-1, -1}
// without it.
std::pair<long, long> KernelWorkCallbacksAndLost(const std::string& summary) {
  std::smatch m;
  static const std::regex line(R"(kernel work: \d+ IPIs sent, (\d+) IPI callbacks, \d+ work items, \d+ hrtimers, (\d+) lost)");
  if (!std::regex_search(summary, m, line)) return {-1, -1};
  return {std::stol(m[1]), std::stol(m[2])};
}

// Waits up to 2 s for the recorder's drain (its main thread) to yield.
bool DrainYielded(pid_t recorder) {
  for (int i = 0; i < 100; ++i) {
    if (::sched_getscheduler(recorder) == SCHED_IDLE) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

void PinThisThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set);
}

// A TLB-shootdown storm: one thread spins on CPU 0 while another of the
// same process maps and unmaps a page on CPU 1, so that every unmap IPIs
// CPU 0 (50k-70k a second here). Both CPUs stay busy with normal-priority
// work for `duration`. Returns the unmaps.
uint64_t RunShootdownStorm(std::chrono::milliseconds duration) {
  std::atomic<bool> done{false};
  std::thread spinner([&] {
    PinThisThread(0);
    while (!done.load(std::memory_order_relaxed)) {
    }
  });
  uint64_t unmaps = 0;
  std::thread unmapper([&] {
    PinThisThread(1);
    const auto end = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < end) {
      void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) break;
      *static_cast<volatile char*>(p) = 1;
      ::munmap(p, 4096);
      ++unmaps;
    }
    done = true;
  });
  unmapper.join();
  spinner.join();
  return unmaps;
}

// Lost events less the program runs the kernel skipped (recursion under a
// flood: no drain can win those back); -1 without a summary.
long RingAndDrainLoss(const std::string& summary) {
  std::smatch m;
  static const std::regex lost(R"(; (\d+) lost events)");
  if (!std::regex_search(summary, m, lost)) return -1;
  long n = std::stol(m[1]);
  static const std::regex skipped(R"(\((\d+) of them program runs the kernel skipped\))");
  if (std::regex_search(summary, m, skipped)) n -= std::stol(m[1]);
  return n;
}

TEST(DrainYieldIntegration, TheDrainRunsUnderSchedIdleWhileTheRingsHaveRoomAndComesBackForTheEnd) {
  GN_REQUIRE_REAL_EBPF();
  std::string out = MakeTempDir() + "/t.pftrace";
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "30", "-o", out, "--events", "sched"});
  ASSERT_TRUE(rec.WaitForStderr("recording", 60s)) << rec.stderr_text();
  // The drain is the main thread; it starts under SCHED_OTHER, and a quiet
  // node shows it room within a few turns.
  EXPECT_TRUE(DrainYielded(rec.pid()));
  rec.Signal(SIGINT);
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  EXPECT_EQ(DrainRaises(rec.stdout_text()).all, 0) << rec.stdout_text();
  EXPECT_EQ(RingAndDrainLoss(rec.stdout_text()), 0) << rec.stdout_text();
}

// The thread named `comm` of process `pid`; 0 when it has none.
pid_t ThreadNamed(pid_t pid, const std::string& comm) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(entry.path() / "comm");
    std::string name;
    std::getline(in, name);
    if (name == comm) return static_cast<pid_t>(std::stol(entry.path().filename().string()));
  }
  return 0;
}

// The deflate thread (record --deflate-thread on) takes the drain's steps:
// under SCHED_IDLE beside it, or the drain would wait for it when raised.
TEST(DrainYieldIntegration, TheDeflateThreadTakesTheDrainsSchedulingPolicy) {
  GN_REQUIRE_REAL_EBPF();
  std::string out = MakeTempDir() + "/t.pftrace";
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "30", "-o", out, "--events", "sched", "--deflate-thread", "on"});
  ASSERT_TRUE(rec.WaitForStderr("recording", 60s)) << rec.stderr_text();
  pid_t deflate = ThreadNamed(rec.pid(), "gn-deflate");
  EXPECT_GT(deflate, 0) << "no gn-deflate thread";
  EXPECT_TRUE(DrainYielded(rec.pid()));
  if (deflate > 0) EXPECT_EQ(::sched_getscheduler(deflate), SCHED_IDLE);
  rec.Signal(SIGINT);
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  EXPECT_EQ(RingAndDrainLoss(rec.stdout_text()), 0) << rec.stdout_text();
  EXPECT_TRUE(ReadTrace(out)) << "the file reads";
}

TEST(DrainYieldIntegration, ADrainTheNodeLeavesNoCpuIsRaisedAndLosesNothing) {
  GN_REQUIRE_REAL_EBPF();
  GN_REQUIRE_ROOT_MOUNT_POINT("ip netns exec");
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 2) GTEST_SKIP() << "needs two CPUs";
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  std::string out = MakeTempDir() + "/t.pftrace";
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "60", "-o", out});
  ASSERT_TRUE(rec.WaitForStderr("recording", 60s)) << rec.stderr_text();
  // A busy loop of normal priority on every CPU (each bounded in time),
  // under a UDP flood that fills the rings at several MB/s: a SCHED_IDLE
  // drain gets next to no CPU here.
  std::vector<std::unique_ptr<ChildProcess>> busy;
  for (long cpu = 0; cpu < cpus; ++cpu)
    busy.push_back(std::make_unique<ChildProcess>(std::vector<std::string>{
        "taskset", "-c", std::to_string(cpu), "timeout", "20", "sh", "-c", "while :; do :; done"}));
  UdpFloodOptions flood;
  flood.duration = 3000ms;
  flood.sender_cpu = 0;
  flood.receiver_cpu = 1;
  UdpFloodResult f = RunUdpFlood(*pair, flood);
  EXPECT_GT(f.sent, 10000u);
  for (auto& b : busy) b->Signal(SIGKILL);
  for (auto& b : busy) b->Wait(10s);
  rec.Signal(SIGINT);
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  const std::string summary = rec.stdout_text();
  const Raises raises = DrainRaises(summary);
  std::printf("udp flood beside busy loops: %lu sent; drain raised %d times (%d late, %d doorbell)\n",
              static_cast<unsigned long>(f.sent), raises.all, raises.late, raises.doorbell);
  EXPECT_EQ(RingAndDrainLoss(summary), 0) << summary;
  EXPECT_GE(raises.all, 1) << summary;
}

TEST(DrainYieldIntegration, AnIpiStormThatFillsTheKernelWorkLogRingsTheDoorbellAndTheDrainKeepsUp) {
  GN_REQUIRE_REAL_EBPF();
  if (::sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string out = MakeTempDir() + "/t.pftrace";
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "60", "-o", out});
  ASSERT_TRUE(rec.WaitForStderr("recording", 60s)) << rec.stderr_text();
  ASSERT_TRUE(DrainYielded(rec.pid())) << "the drain never yielded on a quiet node";
  // The storm fills CPU 0's kernel-work log (2048 entries) in about 30 ms,
  // while the guard would call a turn late only after 300 ms.
  const uint64_t unmaps = RunShootdownStorm(2000ms);
  rec.Signal(SIGINT);
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  const std::string summary = rec.stdout_text();
  const Raises raises = DrainRaises(summary);
  auto [callbacks, lost] = KernelWorkCallbacksAndLost(summary);
  std::printf("ipi storm: %lu unmaps; kernel work: %ld IPI callbacks, %ld lost; drain raised %d times (%d late, %d doorbell)\n",
              static_cast<unsigned long>(unmaps), callbacks, lost, raises.all, raises.late, raises.doorbell);
  EXPECT_GT(unmaps, 10000u);
  EXPECT_GE(raises.doorbell, 1) << summary;
  ASSERT_GE(callbacks, 0) << summary;
  // Of the entries, without the doorbell a late turn's raise lost 19-23%
  // here (and an idle drain the policy never raised for its logs, 50%);
  // with a doorbell that raised the drain but did not wake it, 2.5-7.4%;
  // now none (4 runs). The bound leaves room for a stalled VM.
  EXPECT_LT(static_cast<double>(lost), 0.12 * static_cast<double>(callbacks + lost)) << summary;
}

}  // namespace
}  // namespace gpunoise::testing
