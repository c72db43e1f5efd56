// The Alertmanager webhook's job fan-out end to end, on this machine: a
// process in a real cgroup laid out as slurmstepd lays out a job's tasks
// (.../job_<id>/step_0/task_0, made and removed by the test) is the focus
// of a running `gpunoise monitor` with its flight recorder. The monitor
// exports the job (gpunoise_focus_job_processes{slurm_job_id}); an alert
// for another job does nothing; a job-level alert for its job, naming
// another node as the straggler, makes it dump exactly the alert's window
// (startsAt - alert-lookback, though its ring reaches further back) into a
// file named by the alert's fingerprint and this host; a repeat gets 429.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/clock.h"
#include "integration/support/metrics_scrape.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The cgroup-v2 hierarchy: /sys/fs/cgroup, or /sys/fs/cgroup/unified on
// hybrid hosts (as this VM). "" when neither.
std::string CgroupV2Root() {
  if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) return "/sys/fs/cgroup";
  if (fs::exists("/sys/fs/cgroup/unified/cgroup.procs")) return "/sys/fs/cgroup/unified";
  return "";
}

// "gnf3slurm-PID/job_ID/step_0/task_0" under the v2 root, removed (its
// processes moved back to the root first) when done, also on failure.
class SlurmLikeCgroup {
 public:
  SlurmLikeCgroup(const std::string& root, const std::string& top, const std::string& job) : root_(root) {
    top_ = root + "/" + top;
    leaf_ = top_ + "/job_" + job + "/step_0/task_0";
    std::error_code ec;
    fs::create_directories(leaf_, ec);
    if (ec) leaf_.clear();
  }
  ~SlurmLikeCgroup() {
    if (!leaf_.empty()) {
      std::ifstream procs(leaf_ + "/cgroup.procs");
      for (std::string pid; std::getline(procs, pid);) std::ofstream(root_ + "/cgroup.procs") << pid << "\n";
    }
    // Deepest first: a cgroup is removed with rmdir once it is empty.
    for (std::string d = leaf_; !d.empty() && d.size() > top_.size() - 1; d = d.substr(0, d.rfind('/')))
      ::rmdir(d.c_str());
    ::rmdir(top_.c_str());
  }
  bool ok() const { return !leaf_.empty(); }
  bool Join(pid_t pid) const {
    std::ofstream f(leaf_ + "/cgroup.procs");
    f << pid << "\n";
    f.flush();
    return f.good();
  }

 private:
  std::string root_, top_, leaf_;
};

std::string Rfc3339(int64_t realtime_ns) {
  time_t s = static_cast<time_t>(realtime_ns / 1'000'000'000);
  struct tm tm {};
  gmtime_r(&s, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[16];
  std::snprintf(frac, sizeof(frac), ".%09lldZ", static_cast<long long>(realtime_ns % 1'000'000'000));
  return std::string(buf) + frac;
}

std::string JobAlert(const std::string& job, const std::string& starts_at) {
  return R"({"version":"4","status":"firing","alerts":[{"status":"firing","labels":{)"
         R"("alertname":"GpunoiseSlurmJobStragglerNode","finding":"straggler","instance":"gn-straggler-elsewhere:9464",)"
         R"("slurm_job_id":")" + job + R"("},"annotations":{},"startsAt":")" + starts_at +
         R"(","fingerprint":"f3a1e2b3c4d5e6f7"}]})";
}

TEST(AlertFanoutIntegration, AJobLevelAlertMakesTheNodeOfItsSlurmJobDumpTheAlertsWindow) {
  GN_REQUIRE_REAL_EBPF();
  std::string v2 = CgroupV2Root();
  if (v2.empty()) GTEST_SKIP() << "no cgroup-v2 hierarchy";
  std::string tag = std::to_string(::getpid());
  std::string job = "77" + tag, other_job = "78" + tag;
  std::string top = "gnf3slurm-" + tag;
  SlurmLikeCgroup cgroup(v2, top, job);
  ASSERT_TRUE(cgroup.ok());
  ChildProcess task({"/bin/sleep", "60"});
  ASSERT_TRUE(cgroup.Join(task.pid()));

  std::string dir = MakeTempDir();
  std::string focus = "cgroup:" + v2.substr(std::string("/sys/fs/cgroup").size()) + "/" + top;
  ChildProcess mon({GpunoiseBinary(), "monitor", "--listen", "127.0.0.1:0", "--interval", "500ms", "--focus", focus,
                    "--focus-refresh", "500ms", "--flight-recorder", "8s", "--dump-dir", dir, "--dump-interval", "10m",
                    "--alert-lookback", "2s"});
  ASSERT_TRUE(mon.WaitForStderr("listening", 60s)) << mon.stderr_text();
  auto address = ListeningAddress(mon.stderr_text());
  ASSERT_TRUE(address);
  auto scrape = [&] { return ParseExposition(HttpGet(*address, "/metrics").body); };
  // The job from the cgroup path, and a ring that holds more than the
  // alert's window (6 s of it; the window asked for is 3 s).
  Series s;
  for (auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;) {
    s = scrape();
    if (SumOf(s, "gpunoise_focus_job_processes", {{"slurm_job_id", job}}) >= 1 &&
        SumOf(s, "gpunoise_flight_recorder_window_seconds", {}) >= 6)
      break;
    std::this_thread::sleep_for(200ms);
  }
  EXPECT_EQ(SumOf(s, "gpunoise_focus_job_processes", {{"slurm_job_id", job}}), 1) << mon.stderr_text();
  ASSERT_GE(SumOf(s, "gpunoise_flight_recorder_window_seconds", {}), 6) << mon.stderr_text();

  size_t colon = address->rfind(':');
  httplib::Client client(address->substr(0, colon), std::stoi(address->substr(colon + 1)));
  client.set_read_timeout(5, 0);
  auto post = [&](const std::string& body) { return client.Post("/api/v1/alertmanager", body, "application/json"); };

  // Another SLURM job's alert: not this node's.
  auto r = post(JobAlert(other_job, Rfc3339(static_cast<int64_t>(RealtimeNs()))));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;

  // The alert started 1 s ago; with 2 s of lookback the window starts 3 s ago.
  int64_t rt = static_cast<int64_t>(RealtimeNs());
  uint64_t boot = BoottimeNs();
  uint64_t window_start = boot - 3'000'000'000;
  r = post(JobAlert(job, Rfc3339(rt - 1'000'000'000)));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202) << r->body;
  for (auto deadline = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < deadline;) {
    s = scrape();
    if (SumOf(s, "gpunoise_flight_recorder_dumps_total", {{"result", "written"}}) >= 1) break;
    std::this_thread::sleep_for(200ms);
  }
  EXPECT_EQ(SumOf(s, "gpunoise_flight_recorder_dumps_total", {{"result", "written"}}), 1) << mon.stderr_text();
  auto repeat = post(JobAlert(job, Rfc3339(rt - 1'000'000'000)));
  ASSERT_TRUE(repeat);
  EXPECT_EQ(repeat->status, 429) << "the rate limit still applies: " << repeat->body;

  std::vector<std::string> dumps;
  for (const auto& e : fs::directory_iterator(dir)) dumps.push_back(e.path().filename());
  ASSERT_EQ(dumps.size(), 1u) << mon.stderr_text();
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  EXPECT_NE(dumps[0].find("-alert-f3a1e2b3c4d5e6f7-" + std::string(host)), std::string::npos) << dumps[0];
  std::string error;
  auto trace = ReadTrace(dir + "/" + dumps[0], &error);
  ASSERT_TRUE(trace) << error;
  uint64_t first = UINT64_MAX;
  bool sorted = true;
  for (const auto& [cpu, ts] : PerCpuTimestamps(*trace, &sorted))
    if (!ts.empty()) first = std::min(first, *std::min_element(ts.begin(), ts.end()));
  ASSERT_NE(first, UINT64_MAX) << "no scheduling events in the dump";
  // Nothing before the window (the ring held 6 s and more), and the window
  // is there from its start (events are dense: the monitor itself runs).
  EXPECT_GE(first + 1'000'000, window_start) << "the dump reaches " << (window_start - first) / 1e6 << " ms before the window";
  EXPECT_LE(first, window_start + 300'000'000) << "the dump starts " << (first - window_start) / 1e6 << " ms into the window";
  bool titled = false;
  for (const auto& p : trace->packet())
    if (p.has_track_event() && p.track_event().name().find("[job, alert f3a1e2b3c4d5e6f7]") != std::string::npos)
      titled = true;
  EXPECT_TRUE(titled) << "the dump's slice says why this node dumped";
  EXPECT_NE(mon.stderr_text().find("runs job " + job + " and dumps the same window"), std::string::npos)
      << mon.stderr_text();

  mon.Signal(SIGTERM);
  EXPECT_EQ(mon.Wait(30s), 0) << mon.stderr_text();
  task.Signal(SIGKILL);
  task.Wait(5s);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpunoise::testing
