// gpunoise monitor end to end, as root: the real binary on a loopback port,
// real traffic between two network namespaces, /metrics scraped directly
// and by a real Prometheus server, the flight recorder's traces read back,
// reloads and clean detaching.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/strings.h"
#include "integration/support/host_noise.h"
#include "integration/support/metrics_scrape.h"
#include "integration/support/net_load.h"
#include "integration/support/privileges.h"
#include "integration/support/trace_reader.h"
#include "integration/support/veth_pair.h"
#include "integration/support/workloads.h"

namespace gpunoise::testing {
namespace {

using namespace std::chrono_literals;
using Side = VethPair::Side;

// How the monitor names a device in another namespace (docs/network.md).
std::string Label(const VethPair& pair, Side side) {
  return pair.device(side) + "@" + std::to_string(pair.netns_inode(side));
}

class Monitor {
 public:
  explicit Monitor(std::vector<std::string> extra) {
    std::vector<std::string> args = {GpunoiseBinary(), "monitor", "--listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    child_ = std::make_unique<ChildProcess>(args);
  }
  bool WaitListening() {
    if (!child_->WaitForStderr("listening", 60s)) return false;
    auto address = ListeningAddress(child_->stderr_text());
    if (address) address_ = *address;
    return address.has_value();
  }
  Series Scrape() { return ParseExposition(HttpGet(address_, "/metrics").body); }
  // Waits until the monitor has completed `n` more intervals.
  Series ScrapeAfterIntervals(int n) {
    double start = SumOf(Scrape(), "gpunoise_monitor_intervals_total");
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      Series s = Scrape();
      if (SumOf(s, "gpunoise_monitor_intervals_total") >= start + n) return s;
      std::this_thread::sleep_for(100ms);
    }
    ADD_FAILURE() << "the monitor did not complete " << n << " intervals";
    return Scrape();
  }
  bool WaitForStderr(const std::string& needle, std::chrono::milliseconds t) { return child_->WaitForStderr(needle, t); }
  int Stop(int sig = SIGTERM) {
    child_->Signal(sig);
    return child_->Wait(30s);
  }
  void Signal(int sig) { child_->Signal(sig); }
  std::string log() { return child_->stderr_text(); }
  pid_t pid() const { return child_->pid(); }
  const std::string& address() const { return address_; }

 private:
  std::unique_ptr<ChildProcess> child_;
  std::string address_;
};

std::string UrlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '_' || c == '-' || c == '.') out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

// A real Prometheus (Debian package "prometheus") on loopback with its own
// config and data directory, scraping one target every second. It runs
// under `timeout`, so it is gone after 3 minutes even if this test dies.
class PrometheusServer {
 public:
  explicit PrometheusServer(const std::string& target) {
    dir_ = MakeTempDir();
    address_ = "127.0.0.1:" + std::to_string(FreeLoopbackPort());
    std::ofstream(dir_ + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                               "scrape_configs:\n  - job_name: gpunoise\n    static_configs:\n"
                                               "      - targets: ['" << target << "']\n";
    child_ = std::make_unique<ChildProcess>(std::vector<std::string>{
        "timeout", "180", "prometheus", "--config.file=" + dir_ + "/prometheus.yml",
        "--storage.tsdb.path=" + dir_ + "/data", "--web.listen-address=" + address_, "--log.level=warn"});
  }
  ~PrometheusServer() {
    child_->Signal(SIGTERM);  // timeout passes it on to prometheus
    child_->Wait(20s);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool WaitReady() {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (HttpGet(address_, "/-/ready").status == 200) return true;
      std::this_thread::sleep_for(200ms);
    }
    return false;
  }
  std::string Query(const std::string& promql) { return HttpGet(address_, "/api/v1/query?query=" + UrlEncode(promql)).body; }
  std::string log() { return child_->stderr_text(); }

 private:
  std::string dir_, address_;
  std::unique_ptr<ChildProcess> child_;
};

// The kernel's own count of NET_RX softirqs over all CPUs, read here
// rather than with the monitor's parser so that it checks that one.
double KernelNetRxSoftirqs() {
  double sum = 0;
  // NetRxCount takes a column: one per online CPU.
  for (long column = 0; column < sysconf(_SC_NPROCESSORS_ONLN); ++column)
    sum += static_cast<double>(NetRxCount(static_cast<int>(column)));
  return sum;
}

bool HavePrometheus() { return std::system("command -v prometheus >/dev/null 2>&1") == 0; }

TEST(MonitorIntegration, ServesMetricsAndHealthOnAFreeLoopbackPort) {
  GN_REQUIRE_REAL_EBPF();
  Monitor m({"--interval", "500ms"});
  ASSERT_TRUE(m.WaitListening()) << m.log();
  EXPECT_EQ(m.address().rfind("127.0.0.1:", 0), 0u);
  Series s = m.ScrapeAfterIntervals(2);
  EXPECT_GT(SumOf(s, "gpunoise_softirqs_total", {{"vector", "timer"}}), 0) << "timer softirqs run on every node";
  EXPECT_GT(SumOf(s, "gpunoise_runqueue_latency_seconds_count", {{"threads", "all"}}), 0);
  EXPECT_TRUE(HasSeries(s, "gpunoise_runqueue_latency_seconds_bucket", {{"le", "+Inf"}}));
  EXPECT_EQ(SumOf(s, "gpunoise_collector_up", {{"collector", "irqtime"}}), 1);
  for (std::string vector : {"net_rx", "sched", "rcu"})
    EXPECT_TRUE(HasSeries(s, "gpunoise_softirqs_unreported_total", {{"vector", vector}})) << vector;
  EXPECT_EQ(SumOf(s, "gpunoise_collector_up", {{"collector", "runqlat"}}), 1);
  EXPECT_EQ(SumOf(s, "gpunoise_collector_up", {{"collector", "sampler"}}), 1);
  EXPECT_GT(SumOf(s, "gpunoise_cpu_samples_total"), 0) << "the perf-event sampler runs";
  EXPECT_EQ(SumOf(s, "gpunoise_finding_active"), 0);
  EXPECT_TRUE(HasSeries(s, "gpunoise_finding_active", {{"detector", "softirq_storm"}}));
  HttpReply om = HttpGet(m.address(), "/metrics", "application/openmetrics-text;version=1.0.0");
  EXPECT_NE(om.content_type.find("application/openmetrics-text"), std::string::npos);
  EXPECT_EQ(om.body.substr(om.body.size() - 6), "# EOF\n");
  HttpReply health = HttpGet(m.address(), "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");
  EXPECT_EQ(m.Stop(), 0) << m.log();
}

TEST(MonitorIntegration, FloodRaisesSoftirqAndPacketSeriesAndTheStormFires) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  Monitor m({"--interval", "500ms"});
  ASSERT_TRUE(m.WaitListening()) << m.log();
  std::unique_ptr<PrometheusServer> prom;
  if (HavePrometheus()) {
    prom = std::make_unique<PrometheusServer>(m.address());
    ASSERT_TRUE(prom->WaitReady()) << prom->log();
  } else if (RootTestsRequired()) {
    FAIL() << "prometheus is not installed (Debian package prometheus; tools/setup.sh installs it)";
  }
  Series before = m.ScrapeAfterIntervals(1);
  const double kernel_net_rx0 = KernelNetRxSoftirqs();
  auto rx0 = pair->LinkStatistics(Side::kReceiver);
  UdpFloodOptions flood;
  flood.duration = 4000ms;
  UdpFloodResult r = RunUdpFlood(*pair, flood);
  auto rx1 = pair->LinkStatistics(Side::kReceiver);
  Series after = m.ScrapeAfterIntervals(2);
  const double kernel_net_rx = KernelNetRxSoftirqs() - kernel_net_rx0;
  ASSERT_GT(r.sent, 10000u);

  // Every NET_RX softirq the kernel counted is either counted by the entry
  // program or among those the kernel never reported to it (a handful a
  // flood on this project's VM). The monitor read its counts up to one
  // interval before each of ours: the slack is the node's own NET_RX then.
  auto grew = [&](const char* name) {
    return SumOf(after, name, {{"vector", "net_rx"}}) - SumOf(before, name, {{"vector", "net_rx"}});
  };
  const double counted = grew("gpunoise_softirqs_total");
  const double unreported = grew("gpunoise_softirqs_unreported_total");
  EXPECT_GT(kernel_net_rx, 1000);
  EXPECT_GE(unreported, 0);
  EXPECT_LE(unreported, 0.01 * kernel_net_rx) << unreported << " of " << kernel_net_rx;
  EXPECT_NEAR(counted + unreported, kernel_net_rx, 0.01 * kernel_net_rx + 200)
      << counted << " counted + " << unreported << " unreported";

  const double net_rx = SumOf(after, "gpunoise_softirq_seconds_total", {{"vector", "net_rx"}}) -
                        SumOf(before, "gpunoise_softirq_seconds_total", {{"vector", "net_rx"}});
  EXPECT_GT(net_rx, 0.4) << "a 4 s flood keeps NET_RX busy for a good part of it";
  const double rx_truth = static_cast<double>(rx1["rx_packets"] - rx0["rx_packets"]);
  const std::string rx_label = Label(*pair, Side::kReceiver);
  // By default the monitor hooks no packet: the receiver's packets show as
  // the work of its NAPI polls (veth in GRO mode polls for every packet).
  const double napi_counted = SumOf(after, "gpunoise_napi_packets_total", {{"device", rx_label}}) -
                              SumOf(before, "gpunoise_napi_packets_total", {{"device", rx_label}});
  EXPECT_GT(napi_counted, 0.98 * rx_truth) << napi_counted << " vs " << rx_truth;
  EXPECT_LT(napi_counted, 1.02 * rx_truth + 100) << napi_counted << " vs " << rx_truth;
  EXPECT_GT(SumOf(after, "gpunoise_napi_polls_total", {{"device", rx_label}}), 0);
  // Devices of the monitor's own namespace come from the kernel's device
  // statistics.
  EXPECT_TRUE(HasSeries(after, "gpunoise_net_packets_total", {{"device", "lo"}, {"direction", "rx"}}));
  EXPECT_GE(SumOf(after, "gpunoise_findings_total", {{"detector", "softirq_storm"}}), 1) << m.log();
  EXPECT_NE(m.log().find("finding softirq_storm"), std::string::npos) << m.log();

  if (prom) {
    // The same series through Prometheus' own scrape (OpenMetrics) and its
    // query API.
    std::string body;
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      body = prom->Query("sum(gpunoise_softirq_seconds_total{vector=\"net_rx\"})");
      if (body.find("\"result\":[{") != std::string::npos) break;
      std::this_thread::sleep_for(500ms);
    }
    EXPECT_NE(body.find("\"status\":\"success\""), std::string::npos) << body;
    EXPECT_NE(body.find("\"result\":[{"), std::string::npos) << body << "\n" << prom->log();
    std::string up = prom->Query("up{job=\"gpunoise\"}");
    EXPECT_NE(up.find("\"value\":["), std::string::npos) << up;
    EXPECT_NE(up.find(",\"1\"]"), std::string::npos) << "Prometheus could not parse the exposition: " << up;
    std::string storms = prom->Query("gpunoise_findings_total{detector=\"softirq_storm\"} > 0");
    EXPECT_NE(storms.find("\"result\":[{"), std::string::npos) << storms;
  } else {
    std::cerr << "prometheus is not installed: the Prometheus part was not run\n";
  }
  EXPECT_EQ(m.Stop(), 0) << m.log();
}

TEST(MonitorIntegration, PerPacketCountersMatchDeviceStatistics) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  Monitor m({"--interval", "500ms", "--net-packet-counters", "on"});
  ASSERT_TRUE(m.WaitListening()) << m.log();
  const std::string rx_label = Label(*pair, Side::kReceiver);
  const std::string tx_label = Label(*pair, Side::kSender);
  Series before = m.ScrapeAfterIntervals(1);
  auto rx0 = pair->LinkStatistics(Side::kReceiver);
  auto tx0 = pair->LinkStatistics(Side::kSender);
  UdpFloodOptions flood;
  flood.duration = 2000ms;
  RunUdpFlood(*pair, flood);
  auto rx1 = pair->LinkStatistics(Side::kReceiver);
  auto tx1 = pair->LinkStatistics(Side::kSender);
  Series after = m.ScrapeAfterIntervals(2);
  auto counted = [&](const std::string& dev, const char* dir) {
    return SumOf(after, "gpunoise_net_packets_total", {{"device", dev}, {"direction", dir}}) -
           SumOf(before, "gpunoise_net_packets_total", {{"device", dev}, {"direction", dir}});
  };
  const double rx_truth = static_cast<double>(rx1["rx_packets"] - rx0["rx_packets"]);
  const double tx_truth = static_cast<double>(tx1["tx_packets"] - tx0["tx_packets"]);
  ASSERT_GT(rx_truth, 10000);
  EXPECT_NEAR(counted(rx_label, "rx"), rx_truth, 0.02 * rx_truth + 100);
  EXPECT_NEAR(counted(tx_label, "tx"), tx_truth, 0.02 * tx_truth + 100);
  EXPECT_EQ(m.Stop(), 0) << m.log();
}

// The one child of `pid` (/proc/PID/task/PID/children), "" if not one.
std::string OnlyChildOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::string first, second;
  in >> first >> second;
  return second.empty() ? first : "";
}

// Two busy loops share CPU 1 (bounded by timeout): the first is the focus
// process, the second its competitor. `attach`: the monitor's --attach.
void ExpectTheHogCountedSampledAndNamed(const std::string& attach) {
  ChildProcess focus({"timeout", "30", "taskset", "-c", "1", "sh", "-c", "while :; do :; done"});
  ChildProcess hog({"timeout", "30", "taskset", "-c", "1", "sh", "-c", "while :; do :; done"});
  Monitor m({"--interval", "500ms", "--focus", std::to_string(focus.pid()), "--focus-refresh", "500ms", "--attach",
             attach});
  ASSERT_TRUE(m.WaitListening()) << m.log();
  Series before = m.ScrapeAfterIntervals(2);
  Series after = m.ScrapeAfterIntervals(6);
  EXPECT_GE(SumOf(after, "gpunoise_focus_processes"), 1);
  auto grew = [&](const std::string& name, const std::vector<std::pair<std::string, std::string>>& match) {
    return SumOf(after, name, match) - SumOf(before, name, match);
  };
  EXPECT_GT(grew("gpunoise_focus_oncpu_seconds_total", {{"cpu", "1"}}), 0.5) << m.log();
  EXPECT_GT(grew("gpunoise_focus_preemptions_total", {{"cpu", "1"}, {"culprit", "task"}, {"task_class", "other"}}), 5);
  EXPECT_GT(grew("gpunoise_focus_runqueue_wait_seconds_total", {{"cpu", "1"}, {"after", "preemption"}}), 0.3);
  EXPECT_GT(grew("gpunoise_runqueue_latency_seconds_count", {{"threads", "focus"}}), 5);
  EXPECT_GT(grew("gpunoise_cpu_samples_total", {{"cpu", "1"}, {"context", "task"}, {"class", "focus"}, {"who", "sh"}}), 20);
  EXPECT_GT(grew("gpunoise_cpu_samples_total", {{"cpu", "1"}, {"context", "task"}, {"class", "other"}, {"who", "sh"}}), 20);
  // Half of CPU 1 went to the hog: that is interference, and the kernel
  // charged the focus thread's waits to the hog itself (timeout's child).
  EXPECT_GE(SumOf(after, "gpunoise_findings_total", {{"detector", "interference"}}), 1) << m.log();
  const std::string hog_sh = OnlyChildOf(hog.pid());
  ASSERT_FALSE(hog_sh.empty());
  EXPECT_NE(m.log().find("finding interference (run_queue_delay): sh (pid " + hog_sh + ") kept focus threads waiting"),
            std::string::npos)
      << m.log();
  EXPECT_EQ(SumOf(after, "gpunoise_collector_up", {{"collector", "runqlat"}}), 1) << m.log();
  EXPECT_EQ(m.Stop(), 0) << m.log();
}

TEST(MonitorIntegration, FocusThreadsPreemptedByAHogAreCountedAndSampled) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  ExpectTheHogCountedSampledAndNamed("auto");
}

// The classic twins see tids and the tracepoint's record only, and must
// name the same culprit.
TEST(MonitorIntegration, ClassicTracepointsCountAndNameTheHogAsTpBtfDoes) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  ExpectTheHogCountedSampledAndNamed("tracepoint");
}

// The CPUs a process may run on (/proc/PID/status Cpus_allowed_list).
std::string AllowedCpus(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return std::string(Trim(line.substr(18)));
  return "";
}

TEST(MonitorIntegration, AnIsolatedCpuGetsNoSamplesAndNoMonitorThreads) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  // This VM isolates no CPU: a stand-in sysfs says CPU 1 is isolcpus.
  std::string root = MakeTempDir();
  std::filesystem::create_directories(root + "/devices/system/cpu");
  std::ofstream(root + "/devices/system/cpu/isolated") << "1\n";
  std::ofstream(root + "/devices/system/cpu/nohz_full") << "\n";
  ChildProcess busy({"timeout", "20", "taskset", "-c", "1", "sh", "-c", "while :; do :; done"});
  for (bool include : {false, true}) {
    setenv("GPUNOISE_SYSFS_ROOT", root.c_str(), 1);
    Monitor m({"--interval", "500ms", "--sample-isolated", include ? "on" : "off"});
    unsetenv("GPUNOISE_SYSFS_ROOT");
    ASSERT_TRUE(m.WaitListening()) << m.log();
    Series after = m.ScrapeAfterIntervals(4);
    double on_cpu1 = SumOf(after, "gpunoise_cpu_samples_total", {{"cpu", "1"}});
    double on_cpu0 = SumOf(after, "gpunoise_cpu_samples_total", {{"cpu", "0"}});
    if (include) {
      EXPECT_GT(on_cpu1, 20) << "with sample-isolated on, CPU 1 is sampled";
    } else {
      EXPECT_EQ(on_cpu1, 0) << m.log();
      EXPECT_GT(on_cpu0, 20) << m.log();
      EXPECT_EQ(SumOf(after, "gpunoise_sampler_cpus"), 1);
      EXPECT_EQ(AllowedCpus(m.pid()), "0") << "the monitor's threads stay off the isolated CPU";
    }
    EXPECT_EQ(m.Stop(), 0) << m.log();
  }
}

TEST(MonitorIntegration, SigtermDetachesEveryProgram) {
  GN_REQUIRE_REAL_EBPF();
  Monitor m({"--interval", "500ms", "--flight-recorder", "5s", "--dump-dir", MakeTempDir()});
  ASSERT_TRUE(m.WaitListening()) << m.log();
  m.ScrapeAfterIntervals(1);
  EXPECT_FALSE(LoadedGpunoisePrograms(m.pid()).empty()) << "the running monitor holds its programs";
  pid_t pid = m.pid();
  EXPECT_EQ(m.Stop(SIGTERM), 0) << m.log();
  EXPECT_NE(m.log().find("stopping (SIGTERM)"), std::string::npos) << m.log();
  auto left = LoadedGpunoisePrograms(pid);
  EXPECT_TRUE(left.empty()) << left.size() << " programs left, first: " << left.front();
}

TEST(MonitorIntegration, SighupReloadsTheConfigFile) {
  GN_REQUIRE_REAL_EBPF();
  std::string dir = MakeTempDir();
  std::string conf = dir + "/monitor.conf";
  std::ofstream(conf) << "interval = 1s\nsample-hz = 49\n";
  Monitor m({"--config", conf});
  ASSERT_TRUE(m.WaitListening()) << m.log();
  Series s = m.ScrapeAfterIntervals(1);
  EXPECT_EQ(SumOf(s, "gpunoise_monitor_interval_seconds"), 1);
  EXPECT_EQ(SumOf(s, "gpunoise_sampler_frequency_hertz"), 49);

  std::ofstream(conf) << "# faster, no sampler\ninterval = 500ms\nsample-hz = 0\nfocus = comm:nosuchcomm\n";
  m.Signal(SIGHUP);
  ASSERT_TRUE(m.WaitForStderr("reloaded", 10s)) << m.log();
  s = m.ScrapeAfterIntervals(1);
  EXPECT_EQ(SumOf(s, "gpunoise_monitor_interval_seconds"), 0.5);
  EXPECT_EQ(SumOf(s, "gpunoise_sampler_frequency_hertz"), 0);

  // A broken file is refused and the running configuration stays.
  std::ofstream(conf) << "interval = soon\n";
  m.Signal(SIGHUP);
  ASSERT_TRUE(m.WaitForStderr("reload failed", 10s)) << m.log();
  s = m.ScrapeAfterIntervals(1);
  EXPECT_EQ(SumOf(s, "gpunoise_monitor_interval_seconds"), 0.5);
  EXPECT_EQ(m.Stop(), 0) << m.log();
  std::filesystem::remove_all(dir);
}

TEST(MonitorIntegration, NetworkDevicesComingAndGoingAreForgotten) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  // By default devices of other namespaces are seen through their NAPI
  // polls (the kernel's device statistics cover only the monitor's own
  // namespace), so the receiver's series are the NAPI ones.
  Monitor m({"--interval", "500ms", "--stale-after", "2s"});
  ASSERT_TRUE(m.WaitListening()) << m.log();
  std::string label;
  {
    std::string error;
    auto pair = VethPair::Create({}, &error);
    ASSERT_TRUE(pair) << error;
    label = Label(*pair, Side::kReceiver);
    UdpFloodOptions flood;
    flood.duration = 500ms;
    RunUdpFlood(*pair, flood);
    Series s = m.ScrapeAfterIntervals(2);
    EXPECT_TRUE(HasSeries(s, "gpunoise_napi_packets_total", {{"device", label}})) << label;
  }  // the pair and its namespaces are deleted here
  bool gone = false;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(500ms);
    gone = !HasSeries(m.Scrape(), "gpunoise_napi_packets_total", {{"device", label}});
  }
  EXPECT_TRUE(gone) << "series of " << label << " still there\n" << m.log();
  EXPECT_NE(m.log().find("forgot"), std::string::npos) << m.log();
  // A new pair after that is counted from scratch, and the monitor is fine.
  std::string error;
  auto again = VethPair::Create({}, &error);
  ASSERT_TRUE(again) << error;
  UdpFloodOptions flood;
  flood.duration = 300ms;
  RunUdpFlood(*again, flood);
  Series s = m.ScrapeAfterIntervals(2);
  EXPECT_TRUE(HasSeries(s, "gpunoise_napi_packets_total", {{"device", Label(*again, Side::kReceiver)}}));
  EXPECT_EQ(HttpGet(m.address(), "/healthz").status, 200);
  EXPECT_EQ(m.Stop(), 0) << m.log();
}

// Reads the dump back: decodable, NET_RX softirq events on the flooded CPU,
// and the trace reaches back to before the storm was detected.
struct DumpSummary {
  bool decodable = false;
  uint64_t net_rx_entries = 0;
  uint64_t first_ts = UINT64_MAX, last_ts = 0;
  bool finding_track = false;
};

DumpSummary ReadDump(const std::string& path, std::string* error) {
  DumpSummary d;
  auto trace = ReadTrace(path, error);
  if (!trace) return d;
  d.decodable = true;
  for (const CpuEvent& e : FtraceEventsWithCpu(*trace)) {
    uint64_t ts = e.event->timestamp();
    d.first_ts = std::min(d.first_ts, ts);
    d.last_ts = std::max(d.last_ts, ts);
    if (e.event->has_softirq_entry() && e.event->softirq_entry().vec() == 3) ++d.net_rx_entries;
  }
  for (const auto& name : TrackNames(*trace)) d.finding_track = d.finding_track || name == "gpunoise monitor findings";
  return d;
}

std::vector<std::string> Dumps(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename();
    if (name.rfind("gpunoise-flight-", 0) == 0 && name.size() > 8 && name.substr(name.size() - 8) == ".pftrace")
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(MonitorIntegration, FlightRecorderWritesOneTraceForAStormAndKeepsTheQuotas) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  std::string dir = MakeTempDir();
  // Two older dumps already there; max-dumps 2 means one of them must go.
  for (const char* old : {"gpunoise-flight-20000101-000000-old.pftrace", "gpunoise-flight-20000101-000001-old.pftrace"}) {
    std::ofstream(dir + "/" + old) << "old";
    std::filesystem::last_write_time(dir + "/" + old, std::filesystem::file_time_type::clock::now() - 1h);
  }
  Monitor m({"--interval", "500ms", "--flight-recorder", "10s", "--flight-recorder-bytes", "64M", "--dump-dir", dir,
             "--max-dumps", "2", "--max-dump-bytes", "512M", "--dump-interval", "10m"});
  ASSERT_TRUE(m.WaitListening()) << m.log();
  m.ScrapeAfterIntervals(2);
  uint64_t flood_start = BoottimeNs();
  UdpFloodOptions flood;
  flood.duration = 5000ms;  // long enough for several storm intervals
  UdpFloodResult r = RunUdpFlood(*pair, flood);
  ASSERT_GT(r.sent, 10000u);
  // The storm ends; wait for the dump to be written.
  Series s;
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    s = m.ScrapeAfterIntervals(1);
    if (SumOf(s, "gpunoise_flight_recorder_dumps_total", {{"result", "written"}}) >= 1) break;
  }
  EXPECT_GE(SumOf(s, "gpunoise_findings_total", {{"detector", "softirq_storm"}}), 1) << m.log();
  EXPECT_EQ(SumOf(s, "gpunoise_flight_recorder_dumps_total", {{"result", "written"}}), 1) << m.log();
  // Exactly one new trace; the max-dumps quota removed the oldest dump.
  std::vector<std::string> dumps = Dumps(dir);
  ASSERT_EQ(dumps.size(), 2u) << m.log();
  EXPECT_EQ(dumps[0], dir + "/gpunoise-flight-20000101-000001-old.pftrace");
  EXPECT_EQ(SumOf(s, "gpunoise_flight_recorder_dumps_deleted_total"), 1);
  DumpSummary d = ReadDump(dumps[1], &error);
  ASSERT_TRUE(d.decodable) << error;
  EXPECT_TRUE(d.finding_track);
  EXPECT_GT(d.net_rx_entries, 1000u) << "the storm's NET_RX softirqs are in the trace";
  // The trace covers the storm's window: from before the flood began (the
  // ring holds 10 s) to the detection.
  EXPECT_LT(d.first_ts, flood_start + 1'000'000'000) << "first " << d.first_ts << " flood " << flood_start;
  EXPECT_GT(d.last_ts, flood_start);
  // More storm intervals and other detectors' findings were rate-limited,
  // not written.
  EXPECT_EQ(Dumps(dir).size(), 2u);
  EXPECT_EQ(m.Stop(), 0) << m.log();
  std::filesystem::remove_all(dir);
}

TEST(MonitorIntegration, FlightRecorderRefusesADumpLargerThanTheByteQuota) {
  GN_REQUIRE_REAL_EBPF();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  std::string error;
  auto pair = VethPair::Create({}, &error);
  ASSERT_TRUE(pair) << error;
  std::string dir = MakeTempDir();
  Monitor m({"--interval", "500ms", "--flight-recorder", "5s", "--dump-dir", dir, "--max-dump-bytes", "4k"});
  ASSERT_TRUE(m.WaitListening()) << m.log();
  m.ScrapeAfterIntervals(1);
  UdpFloodOptions flood;
  flood.duration = 3000ms;
  RunUdpFlood(*pair, flood);
  Series s;
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    s = m.ScrapeAfterIntervals(1);
    if (SumOf(s, "gpunoise_flight_recorder_dumps_total", {{"result", "too_big"}}) >= 1) break;
  }
  EXPECT_EQ(SumOf(s, "gpunoise_flight_recorder_dumps_total", {{"result", "too_big"}}), 1) << m.log();
  EXPECT_TRUE(Dumps(dir).empty());
  EXPECT_EQ(m.Stop(), 0) << m.log();
  std::filesystem::remove_all(dir);
}

// Offlining a CPU disturbs everything else on a shared machine, so this
// runs only when asked (GPUNOISE_TEST_CPU_HOTPLUG=1).
TEST(MonitorIntegration, SamplerFollowsACpuGoingOfflineAndBack) {
  GN_REQUIRE_REAL_EBPF();
  const char* want = std::getenv("GPUNOISE_TEST_CPU_HOTPLUG");
  if (!want || std::string(want) != "1") GTEST_SKIP() << "set GPUNOISE_TEST_CPU_HOTPLUG=1 to offline CPU 1 for a few seconds";
  const std::string online = "/sys/devices/system/cpu/cpu1/online";
  if (access(online.c_str(), W_OK) != 0) GTEST_SKIP() << online << " is not writable";
  Monitor m({"--interval", "500ms"});
  ASSERT_TRUE(m.WaitListening()) << m.log();
  Series s = m.ScrapeAfterIntervals(2);
  ASSERT_EQ(SumOf(s, "gpunoise_sampler_cpus"), 2);
  auto set_online = [&](const char* v) {
    std::ofstream f(online);
    f << v;
    f.flush();
    return f.good();
  };
  ASSERT_TRUE(set_online("0")) << "could not offline CPU 1";
  s = m.ScrapeAfterIntervals(3);
  double samples_off = SumOf(s, "gpunoise_cpu_samples_total", {{"cpu", "1"}});
  EXPECT_EQ(SumOf(s, "gpunoise_sampler_cpus"), 1);
  ASSERT_TRUE(set_online("1")) << "could not bring CPU 1 back";
  s = m.ScrapeAfterIntervals(4);
  EXPECT_EQ(SumOf(s, "gpunoise_sampler_cpus"), 2) << m.log();
  EXPECT_GT(SumOf(s, "gpunoise_cpu_samples_total", {{"cpu", "1"}}), samples_off) << "CPU 1 is sampled again";
  EXPECT_EQ(HttpGet(m.address(), "/healthz").status, 200);
  EXPECT_EQ(m.Stop(), 0) << m.log();
}

}  // namespace
}  // namespace gpunoise::testing
