// The kernel log in a recording, for real: a veth port of a bridge in a
// network namespace this test makes loses its carrier and gets it back
// during `gpunoise record`; the bridge's own messages must be in the trace
// at the times it happened, attached to that veth, in the trace
// processor's log table and in the report's typed records.
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "analyze/timeline_builder.h"
#include "common/strings.h"
#include "import/trace_reader.h"
#include "integration/support/privileges.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"
#include "report/report_session.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;

uint64_t BoottimeNs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A namespace with a bridge and one veth port, removed at the end.
class BridgedVeth {
 public:
  BridgedVeth() {
    std::string tag = std::to_string(::getpid() % 100000);
    ns_ = "gnkl-" + tag;
    bridge_ = "gnklb" + tag;
    port_ = "gnklp" + tag;
    peer_ = "gnklq" + tag;
    ok_ = Ip({"netns", "add", ns_}) && In({"link", "add", bridge_, "type", "bridge"}) &&
          In({"link", "add", port_, "type", "veth", "peer", "name", peer_}) &&
          In({"link", "set", port_, "master", bridge_}) && In({"link", "set", bridge_, "up"}) &&
          In({"link", "set", peer_, "up"}) && In({"link", "set", port_, "up"});
  }
  ~BridgedVeth() { Ip({"netns", "del", ns_}); }
  bool ok() const { return ok_; }
  bool SetPeer(bool up) { return In({"link", "set", peer_, up ? "up" : "down"}); }
  const std::string& port() const { return port_; }

 private:
  static bool Ip(std::vector<std::string> args) {
    args.insert(args.begin(), "ip");
    return RunCommand(args) == 0;
  }
  bool In(std::vector<std::string> args) {
    args.insert(args.begin(), {"-n", ns_});
    return Ip(args);
  }
  std::string ns_, bridge_, port_, peer_;
  bool ok_ = false;
};

std::vector<std::string> Rows(const std::string& tp, const std::string& trace, const std::string& sql) {
  std::string dir = MakeTempDir();
  std::ofstream(dir + "/q.sql") << sql;
  ChildProcess proc({tp, "-q", dir + "/q.sql", trace});
  EXPECT_EQ(proc.Wait(120s), 0) << proc.stderr_text();
  std::vector<std::string> rows;
  std::istringstream lines(proc.stdout_text());
  std::string line;
  bool header = true;
  while (std::getline(lines, line)) {
    if (header) {
      header = false;
      continue;
    }
    if (!line.empty()) rows.push_back(line);
  }
  return rows;
}

TEST(KernelLogIntegration, ALinkLossDuringARecordingIsInTheTraceAtItsTimeAttachedToItsDevice) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  std::string trace = dir + "/klog.pftrace";
  uint64_t down_at = 0, up_at = 0;
  std::string port;
  {
    BridgedVeth net;
    ASSERT_TRUE(net.ok()) << "could not build the bridge in a namespace";
    port = net.port();
    std::this_thread::sleep_for(200ms);  // its own "forwarding state" lines come before the recording
    ChildProcess rec({GpunoiseBinary(), "record", "-d", "3", "--events", "sched", "-o", trace});
    ASSERT_TRUE(rec.WaitForStderr("until it ends", 30s)) << rec.stderr_text();
    std::this_thread::sleep_for(500ms);
    down_at = BoottimeNs();
    ASSERT_TRUE(net.SetPeer(false));
    std::this_thread::sleep_for(500ms);
    up_at = BoottimeNs();
    ASSERT_TRUE(net.SetPeer(true));
    ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
    EXPECT_NE(rec.stderr_text().find("kernel log: "), std::string::npos) << rec.stderr_text();
  }

  // Typed records, as the report reads them.
  analyze::TimelineBuilder builder;
  import::TraceReader reader(builder, {});
  ASSERT_TRUE(reader.ReadFile(trace).ok());
  analyze::Timeline t = builder.Finish();
  const model::KernelLogEntry* down = nullptr;
  const model::KernelLogEntry* up = nullptr;
  for (const auto& e : t.kernel_log) {
    if (e.about != port) continue;
    if (e.cls == model::KernelLogClass::kLinkDown && !down) down = &e;
    if (e.cls == model::KernelLogClass::kLinkUp && e.ts > down_at && !up) up = &e;
  }
  ASSERT_NE(down, nullptr) << "no link-down record of " << port << " among " << t.kernel_log.size();
  ASSERT_NE(up, nullptr);
  // The kernel prints it while `ip` changes the link: within 100 ms after
  // the command started, on the trace clock.
  EXPECT_GE(down->ts + 2'000'000, down_at);  // the clock anchor is good to a few microseconds; 2 ms slack
  EXPECT_LT(down->ts, down_at + 100'000'000);
  EXPECT_GE(up->ts + 2'000'000, up_at);
  EXPECT_LT(up->ts, up_at + 100'000'000);
  EXPECT_GE(down->ts, t.start_ts);
  EXPECT_LE(up->ts, t.end_ts + 100'000'000);
  std::printf("link down %+.3f ms, up %+.3f ms after the ip command\n", (double(down->ts) - double(down_at)) / 1e6,
              (double(up->ts) - double(up_at)) / 1e6);

  // The report turns the loss into a finding on that device.
  report::ReportOptions options;
  options.trace_path = trace;
  auto result = report::RunReport(options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  bool found = false;
  for (const auto& f : result->analysis.findings)
    if (f.detector == "kernel_log" && f.kind == "link_down" && f.device == port) found = true;
  EXPECT_TRUE(found) << result->output;

  // And the trace processor's log table has it at the same time.
  std::string tp = FindTraceProcessor();
  if (tp.empty()) GN_SKIP_NOT_PACKAGED(kNoTraceProcessor);
  auto rows = Rows(tp, trace,
                   "select ts, tag from android_logs where msg like '%(" + port + ") entered disabled state%'");
  ASSERT_EQ(rows.size(), 1u);
  auto comma = rows[0].find(',');
  auto ts = ParseInt64(rows[0].substr(0, comma));
  ASSERT_TRUE(ts.has_value());
  // Through REALTIME and back: within a millisecond of the typed record.
  EXPECT_NEAR(static_cast<double>(*ts), static_cast<double>(down->ts), 1e6);
  EXPECT_NE(rows[0].find("link_down"), std::string::npos) << rows[0];
}

}  // namespace
}  // namespace gpunoise::testing
