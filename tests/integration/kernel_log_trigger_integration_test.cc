// The monitor's flight recorder triggered by the kernel log: a NETDEV
// WATCHDOG line written to /dev/kmsg (as root) while `gpunoise monitor`
// runs with its flight recorder makes a kernel_log finding and one dump
// whose finding slice quotes the line; the same class on another device
// soon after is rate-limited, not a second dump. The dump carries the
// kernel log of its window: the line that triggered it is in the trace
// processor's android_logs table, at the time it was written.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "common/strings.h"

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

std::vector<std::string> Rows(const std::string& tp, const std::string& trace, const std::string& sql) {
  std::string dir = MakeTempDir();
  std::ofstream(dir + "/q.sql") << sql;
  ChildProcess proc({tp, "-q", dir + "/q.sql", trace});
  EXPECT_EQ(proc.Wait(120s), 0) << proc.stderr_text();
  std::filesystem::remove_all(dir);
  std::vector<std::string> rows;
  std::istringstream lines(proc.stdout_text());
  std::string line;
  for (bool header = true; std::getline(lines, line); header = false)
    if (!header && !line.empty()) rows.push_back(line);
  return rows;
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
  uint64_t before = BoottimeNs();
  std::ofstream("/dev/kmsg") << "<4>" << line << "\n" << std::flush;
  uint64_t after = BoottimeNs();
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
  EXPECT_NE(mon.stderr_text().find("kernel log records, 0 lost"), std::string::npos) << mon.stderr_text();

  // The line itself is in the dump's kernel log, classified, at its time
  // (the monitor's /dev/kmsg reader anchors its clock when it records).
  std::string tp = FindTraceProcessor();
  if (!tp.empty()) {
    auto rows = Rows(tp, dumps[0], "select ts, tag from android_logs where msg like '%" + line + "%'");
    ASSERT_EQ(rows.size(), 1u) << mon.stderr_text();
    auto ts = ParseInt64(rows[0].substr(0, rows[0].find(',')));
    ASSERT_TRUE(ts.has_value()) << rows[0];
    // Through REALTIME and back; the anchor is good to about a millisecond.
    EXPECT_GE(*ts, static_cast<int64_t>(before) - 2'000'000) << rows[0];
    EXPECT_LE(*ts, static_cast<int64_t>(after) + 2'000'000) << rows[0];
    EXPECT_NE(rows[0].find("tx_timeout"), std::string::npos) << rows[0];
  }
  mon.Signal(SIGTERM);
  EXPECT_EQ(mon.Wait(30s), 0) << mon.stderr_text();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpunoise::testing
