// The kernel log in a recording, for real: a veth port of a bridge in a
// network namespace this test makes loses its carrier and gets it back
// during `gpunoise record`; the bridge's own messages must be in the trace
// at the times it happened, attached to that veth, in the trace
// processor's log table and in the report's typed records. And the
// printk:console half: a line written to /dev/kmsg by a thread of this test
// pinned to one CPU is in the trace once, with that CPU, that thread and
// the time of the write, and /dev/kmsg's level, facility and sequence.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

// Writes `line` to /dev/kmsg from a thread named `name` pinned to `cpu`;
// returns its tid and the BOOTTIME just before and after the write.
struct Written {
  int32_t tid = 0;
  uint64_t before = 0, after = 0;
  bool ok = false;
};
Written WriteKmsgFromThread(const std::string& line, const std::string& name, int cpu) {
  Written w;
  std::thread t([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ::sched_setaffinity(0, sizeof(set), &set);
    ::prctl(PR_SET_NAME, name.c_str());
    w.tid = static_cast<int32_t>(::syscall(SYS_gettid));
    std::ofstream kmsg("/dev/kmsg");
    w.before = BoottimeNs();
    kmsg << line << std::flush;
    w.after = BoottimeNs();
    w.ok = kmsg.good();
  });
  t.join();
  return w;
}

TEST(KernelLogIntegration, AKmsgLineAppearsOnceWithTheCpuTaskAndTimeOfItsPrintk) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  std::string trace = dir + "/console.pftrace";
  int cpu = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)) - 1;
  std::string text = "gpunoise-console-test-" + std::to_string(::getpid()) + ": printk caller probe";
  const std::string name = "gnklwriter";
  Written w;
  std::string port;
  uint64_t down_at = 0;
  std::string log;
  {
    BridgedVeth net;
    ASSERT_TRUE(net.ok()) << "could not build the bridge in a namespace";
    port = net.port();
    std::this_thread::sleep_for(200ms);
    ChildProcess rec({GpunoiseBinary(), "record", "-d", "3", "--events", "sched", "-o", trace});
    ASSERT_TRUE(rec.WaitForStderr("until it ends", 30s)) << rec.stderr_text();
    std::this_thread::sleep_for(300ms);
    w = WriteKmsgFromThread("<4>" + text + "\n", name, cpu);
    ASSERT_TRUE(w.ok);
    std::this_thread::sleep_for(200ms);
    down_at = BoottimeNs();
    ASSERT_TRUE(net.SetPeer(false));
    std::this_thread::sleep_for(300ms);
    ASSERT_TRUE(net.SetPeer(true));
    ASSERT_EQ(rec.Wait(60s), 0) << rec.stderr_text();
    log = rec.stderr_text();
  }
  EXPECT_NE(log.find("with the printk's time, CPU and task"), std::string::npos) << log;
  EXPECT_NE(log.find("console"), std::string::npos) << log;

  analyze::TimelineBuilder builder;
  import::TraceReader reader(builder, {});
  ASSERT_TRUE(reader.ReadFile(trace).ok());
  analyze::Timeline t = builder.Finish();
  std::vector<const model::KernelLogEntry*> probes;
  const model::KernelLogEntry* down = nullptr;
  for (const auto& e : t.kernel_log) {
    if (e.text.find(text) != std::string::npos) probes.push_back(&e);
    if (e.about == port && e.cls == model::KernelLogClass::kLinkDown && e.ts >= down_at && !down) down = &e;
  }
  ASSERT_EQ(probes.size(), 1u) << "the line must be in the trace exactly once";
  const model::KernelLogEntry& p = *probes[0];
  EXPECT_EQ(p.source, model::KernelLogSource::kBoth);
  EXPECT_EQ(p.cpu, cpu);
  EXPECT_EQ(p.tid, w.tid);
  EXPECT_EQ(p.pid, ::getpid());
  EXPECT_EQ(p.comm, name);
  EXPECT_EQ(p.level, 4);
  EXPECT_EQ(p.facility, 1);  // a user write
  EXPECT_GT(p.seq, 0u);
  // The printk's own time: inside the write(2) call, exactly.
  EXPECT_GE(p.ts, w.before);
  EXPECT_LE(p.ts, w.after);
  std::printf("probe at +%.1f us into a %.1f us write, CPU %d tid %d\n", (double(p.ts) - double(w.before)) / 1e3,
              (double(w.after) - double(w.before)) / 1e3, p.cpu, p.tid);

  // The bridge's line of the veth losing its peer: printed where the
  // carrier change is handled, by linkwatch's work item (a kworker) or by
  // `ip`'s own netlink request when it syncs the device first; the device
  // is the port it names (a veth has no parent device, so the kernel gives
  // it no DEVICE=).
  ASSERT_NE(down, nullptr) << "no link-down record of " << port;
  EXPECT_EQ(down->source, model::KernelLogSource::kBoth);
  EXPECT_TRUE(down->comm == "ip" || down->comm.rfind("kworker/", 0) == 0) << down->comm;
  EXPECT_GT(down->tid, 0);
  std::printf("link down printed by %s (tid %d) on CPU %d\n", down->comm.c_str(), down->tid, down->cpu);
  EXPECT_GE(down->cpu, 0);
  EXPECT_LT(down->ts, down_at + 100'000'000);

  // The report's loss lines say how the two halves matched.
  report::ReportOptions options;
  options.trace_path = trace;
  auto result = report::RunReport(options);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_NE(result->output.find("with the printk's CPU and task"), std::string::npos) << result->output;
  EXPECT_GE(result->analysis.loss.kernel_log.with_caller, 2u);
  EXPECT_TRUE(result->analysis.loss.kernel_log.console);
  options.json = true;
  auto json = report::RunReport(options);
  ASSERT_TRUE(json.ok()) << json.error().message;
  EXPECT_NE(json->output.find("\"console\": true"), std::string::npos) << json->output;

  // The trace processor puts the line on the writing thread.
  std::string tp = FindTraceProcessor();
  if (tp.empty()) GN_SKIP_NOT_PACKAGED(kNoTraceProcessor);
  auto rows = Rows(tp, trace,
                   "select t.tid, t.name from android_logs l join thread t using(utid) where l.msg like '%" + text + "%'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].substr(0, rows[0].find(',')), std::to_string(w.tid)) << rows[0];
}

}  // namespace
}  // namespace gpunoise::testing
