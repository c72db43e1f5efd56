// The monitor's flight recorder triggered by the kernel log: a NETDEV
// WATCHDOG line written to /dev/kmsg (as root) while `gpunoise monitor`
// runs with its flight recorder makes a kernel_log finding and one dump
// whose finding slice quotes the line; the same class on another device
// soon after is rate-limited, not a second dump.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "integration/support/metrics_scrape.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> Dumps(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename();
    if (name.rfind("gpunoise-flight-", 0) == 0 && name.ends_with(".pftrace")) out.push_back(e.path());
  }
  return out;
}

TEST(KernelLogTriggerIntegration, AWatchdogLineInTheKernelLogTriggersOneRateLimitedDump) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  ChildProcess mon({GpunoiseBinary(), "monitor", "--listen", "127.0.0.1:0", "--interval", "500ms",
                    "--flight-recorder", "5s", "--dump-dir", dir, "--dump-interval", "10m"});
  ASSERT_TRUE(mon.WaitForStderr("listening", 60s)) << mon.stderr_text();
  auto address = ListeningAddress(mon.stderr_text());
  ASSERT_TRUE(address);
  auto scrape = [&] { return ParseExposition(HttpGet(*address, "/metrics").body); };
  auto wait_for = [&](const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels, double at_least) {
    Series s;
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      s = scrape();
      if (SumOf(s, name, labels) >= at_least) break;
      std::this_thread::sleep_for(200ms);
    }
    return s;
  };
  wait_for("gpunoise_monitor_intervals_total", {}, 2);

  std::string tag = std::to_string(::getpid());
  std::string device = "gnktx" + tag;
  std::string line = "gpunoise-trigger-test-" + tag + ": NETDEV WATCHDOG: " + device +
                     " (gnk): transmit queue 0 timed out 5000 ms";
  std::ofstream("/dev/kmsg") << "<4>" << line << "\n" << std::flush;
  Series s = wait_for("gpunoise_flight_recorder_dumps_total", {{"result", "written"}}, 1);
  EXPECT_EQ(SumOf(s, "gpunoise_flight_recorder_dumps_total", {{"result", "written"}}), 1) << mon.stderr_text();
  EXPECT_GE(SumOf(s, "gpunoise_findings_total", {{"detector", "kernel_log"}}), 1) << mon.stderr_text();
  EXPECT_GE(SumOf(s, "gpunoise_kernel_log_messages_total", {{"class", "tx_timeout"}, {"device", device}}), 1);

  // Another device's watchdog: a new finding episode, whose dump the
  // --dump-interval rate limit refuses.
  std::ofstream("/dev/kmsg") << "<4>gpunoise-trigger-test-" << tag << ": NETDEV WATCHDOG: " << device
                             << "b (gnk): transmit queue 1 timed out 5000 ms\n" << std::flush;
  s = wait_for("gpunoise_flight_recorder_dumps_total", {{"result", "rate_limited"}}, 1);
  EXPECT_GE(SumOf(s, "gpunoise_flight_recorder_dumps_total", {{"result", "rate_limited"}}), 1) << mon.stderr_text();
  EXPECT_NE(mon.stderr_text().find("finding kernel_log (tx_timeout)"), std::string::npos) << mon.stderr_text();

  std::vector<std::string> dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 1u) << mon.stderr_text();
  std::string error;
  auto trace = ReadTrace(dumps[0], &error);
  ASSERT_TRUE(trace) << error;
  bool quoted = false;
  for (const auto& p : trace->packet())
    if (p.has_track_event() && p.track_event().name().find(line) != std::string::npos) quoted = true;
  EXPECT_TRUE(quoted) << "the dump's finding slice quotes the watchdog line";
  mon.Signal(SIGTERM);
  EXPECT_EQ(mon.Wait(30s), 0) << mon.stderr_text();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpunoise::testing
