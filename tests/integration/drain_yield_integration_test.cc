// The recorder's drain yields to the job (record/drain_priority.h): it runs
// under SCHED_IDLE while its rings have room, and goes back to SCHED_OTHER,
// losing nothing, when the node leaves it no CPU.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "integration/support/net_load.h"
#include "integration/support/privileges.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

// "drain: SCHED_IDLE while the rings had room (from +T s); back to
// SCHED_OTHER N times (M for a late turn), ..."; {-1, -1} without that line.
std::pair<int, int> DrainRaises(const std::string& summary) {
  std::smatch m;
  static const std::regex line(R"(drain: SCHED_IDLE while the rings had room \([^)]*\); back to SCHED_OTHER (\d+) times \((\d+) for a late turn\))");
  if (!std::regex_search(summary, m, line)) return {-1, -1};
  return {std::stoi(m[1]), std::stoi(m[2])};
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
  int policy = -1;
  for (int i = 0; i < 100 && policy != SCHED_IDLE; ++i) {
    std::this_thread::sleep_for(20ms);
    policy = ::sched_getscheduler(rec.pid());
  }
  EXPECT_EQ(policy, SCHED_IDLE);
  rec.Signal(SIGINT);
  ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  EXPECT_EQ(DrainRaises(rec.stdout_text()).first, 0) << rec.stdout_text();
  EXPECT_EQ(RingAndDrainLoss(rec.stdout_text()), 0) << rec.stdout_text();
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
  EXPECT_EQ(RingAndDrainLoss(summary), 0) << summary;
  auto [raises, late] = DrainRaises(summary);
  EXPECT_GE(raises, 1) << summary;
}

}  // namespace
}  // namespace gpunoise::testing
