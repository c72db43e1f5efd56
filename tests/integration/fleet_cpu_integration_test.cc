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

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

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

// "gn-focus" spins 1.2 s on CPU 1, beside "gn-hog" when `hog`; in a session
// of its own at autogroup nice -19, so the hog (not another build on this
// shared machine) is what it waits for.
void RunFocus(bool hog) {
  pid_t child = ::fork();
  if (child == 0) {
    ::setsid();
    std::ofstream("/proc/self/autogroup") << "-19";
    std::atomic<bool> stop{false};
    std::thread h;
    if (hog)
      h = std::thread([&] {
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
    if (h.joinable()) h.join();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
}

class TempDir {
 public:
  TempDir() : path_(MakeTempDir()) {}
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string RecordNode(const std::string& dir, const std::string& name, bool hog) {
  std::string out = dir + "/" + name + ".pftrace";
  ChildProcess rec({GpunoiseBinary(), "record", "-d", "2", "--machine-name", name, "-o", out});
  EXPECT_TRUE(rec.WaitForStderr("recording", 20s)) << rec.stderr_text();
  RunFocus(hog);
  EXPECT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
  return out;
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
  EXPECT_NE(out.find(" 1. [straggler] node3 stands out on the CPU side"), std::string::npos) << out;
  EXPECT_NE(out.find("gn-hog"), std::string::npos) << "its own finding as the cause:\n" << out;

  ChildProcess two({GpunoiseBinary(), "report", traces[0], traces[3], "--focus", "gn-focus"});
  ASSERT_EQ(two.Wait(120s), 0) << two.stderr_text();
  std::string out2 = two.stdout_text();
  EXPECT_NE(out2.find("no robust score is possible with 2 machines"), std::string::npos) << out2;
  EXPECT_EQ(out2.find("[straggler]"), std::string::npos) << out2;
}

}  // namespace
}  // namespace gpunoise::testing
