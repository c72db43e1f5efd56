#include "monitor/metrics_builder.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "export/openmetrics/exposition.h"
#include "integration/support/privileges.h"

namespace gpunoise::monitor {
namespace {

using openmetrics::MetricFamily;

const MetricFamily* Find(const std::vector<MetricFamily>& fs, std::string_view name) {
  for (const auto& f : fs)
    if (f.name == name) return &f;
  return nullptr;
}

double Value(const MetricFamily& f, const openmetrics::Labels& labels) {
  for (const auto& s : f.samples)
    if (s.labels == labels) return s.value;
  ADD_FAILURE() << "no sample of " << f.name << " with those labels";
  return -1;
}

struct Fixture {
  model::AggregateSnapshot snap;
  model::IrqTable irqs;
  model::NetNames names;
  MetricsInput in;
  Fixture() {
    model::SoftirqCpuCounters s;
    s.cpu = 1;
    s.count[3] = 1000;
    s.ns[3] = 250'000'000;
    snap.softirqs.push_back(s);
    snap.hardirqs.push_back({1, 30, 50, 5'000'000});
    model::IrqInfo irq;
    irq.irq = 30;
    irq.name = "virtio2-input.0";
    irq.device = "eth0";
    irq.queue = 0;
    irqs[30] = irq;
    model::RunqueueCpuHistograms rq;
    rq.cpu = 0;
    rq.all = model::Log2Histogram{std::vector<uint64_t>(27, 0), 0, 0};
    rq.all.slots[0] = 5;
    rq.all.slots[3] = 2;    // [8, 16) us
    rq.all.slots[26] = 1;   // 67 s and up: only in +Inf
    rq.all.count = 8;
    rq.all.sum_ns = 70'000'000'000;
    rq.focus = model::Log2Histogram{std::vector<uint64_t>(27, 0), 0, 0};
    snap.runqueue.push_back(rq);
    model::FocusCpuCounters f;
    f.cpu = 1;
    f.switches = 40;
    f.preempted_by[static_cast<int>(model::TaskClass::kOther)] = 7;
    f.softirq_count = 9;
    f.softirq_ns = 3'000'000;
    snap.focus.push_back(f);
    model::SampleCounter sc;
    sc.cpu = 1;
    sc.comm = model::TaskComm("hog \"x\"");
    sc.count = 12;
    snap.samples.push_back(sc);
    sc.context = model::SampleContext::kSoftirq;
    sc.comm = model::TaskComm();
    sc.id = 3;
    sc.count = 4;
    snap.samples.push_back(sc);
    names.own_netns = 1;
    names.devices[{1, 2}] = "eth0";
    names.drop_reasons[2] = "NOT_SPECIFIED";
    snap.net.devices.push_back({{1, 2}, 0, model::NetDirection::kRx, 0, 100, 6400, 0});
    snap.net.devices.push_back({{1, 2}, 0, model::NetDirection::kRx, 1, 50, 3200, 0});
    snap.net.devices.push_back({{1, 2}, 0, model::NetDirection::kTxTimeout, 1, 2, 0, 0});
    snap.net.napi.push_back({{1, 2}, 7, 0, 30, 1, 80, 20, 5000});
    snap.net.drops.push_back({{1, 2}, 2, 0xffff, 1, 11, 700});
    snap.kernel["warn_count"] = 3;
    in.totals = &snap;
    in.irqs = &irqs;
    in.net_names = &names;
    in.active.push_back({"softirq_storm", "net_rx", 1, "eth0", 0, "eth0 queue 0", "NET_RX took 80% of CPU 1"});
    in.findings_total["softirq_storm"] = 2;
    in.version = "0.1.0";
    in.sample_hz = 49;
    in.sampler_cpus = {0, 1};
    model::CollectorReport r;
    r.name = "irqtime";
    r.state = model::CollectorState::kActive;
    in.collectors.push_back(r);
    in.gpus.push_back({0, "NVIDIA H200", "GPU-e18f42ea", 143771ull << 20});
    gpu::GpuSample g;
    g.gpu = 0;
    g.sm_clock_mhz = 1980;
    g.gpu_utilization = 87;
    g.memory_utilization = 40;
    g.memory_used_bytes = 2.0e9;
    g.temperature_c = 51;
    g.power_w = 412.5;
    g.throttle_reasons = gpu::kThrottleGpuIdle | gpu::kThrottleSwPowerCap;
    in.gpu_samples.push_back(g);
    in.focus_processes = 3;
    in.focus_slurm_jobs = {{"4242", 2}, {"other", 1}};
  }
};

TEST(MetricsBuilder, EveryFamilyIsValid) {
  Fixture fx;
  for (const auto& f : BuildMetrics(fx.in)) {
    auto st = openmetrics::Validate(f);
    EXPECT_TRUE(st.ok()) << st.error().message;
    EXPECT_EQ(f.name.rfind("gpunoise_", 0) == 0 || f.name.rfind("process_", 0) == 0, true) << f.name;
  }
}

// The SLURM job of the focus processes (their cgroup's job_<id>): what
// gpunoise-slurm-job-rules.yml joins nodes to their job by.
TEST(MetricsBuilder, FocusProcessesPerSlurmJobCarryTheJobId) {
  Fixture fx;
  auto fs = BuildMetrics(fx.in);
  const MetricFamily* jobs = Find(fs, "gpunoise_focus_job_processes");
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->samples.size(), 2u);
  EXPECT_DOUBLE_EQ(Value(*jobs, {{"slurm_job_id", "4242"}}), 2);
  EXPECT_DOUBLE_EQ(Value(*jobs, {{"slurm_job_id", "other"}}), 1);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_focus_processes"), {}), 3);
}

TEST(MetricsBuilder, SoftirqAndHardirqSeriesCarryTheirLabels) {
  Fixture fx;
  auto fs = BuildMetrics(fx.in);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_softirq_seconds"), {{"cpu", "1"}, {"vector", "net_rx"}}), 0.25);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_softirqs"), {{"cpu", "1"}, {"vector", "net_rx"}}), 1000);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_hardirq_seconds"),
                         {{"cpu", "1"}, {"irq", "30"}, {"name", "virtio2-input.0"}, {"device", "eth0"}, {"queue", "0"}}),
                   0.005);
}

// Every vector has its series once softirqs are audited, zeros too; none
// at all when they are not (absent means not audited, never "none").
TEST(MetricsBuilder, UnreportedSoftirqsHaveEveryVectorOnlyWhenAudited) {
  Fixture fx;
  EXPECT_FALSE(Find(BuildMetrics(fx.in), "gpunoise_softirqs_unreported"));
  model::SoftirqCounts unreported{};
  unreported[static_cast<size_t>(model::SoftirqVec::kSched)] = 7;
  fx.in.unreported_softirqs = unreported;
  auto fs = BuildMetrics(fx.in);
  const MetricFamily* family = Find(fs, "gpunoise_softirqs_unreported");
  ASSERT_TRUE(family);
  EXPECT_EQ(family->type, openmetrics::MetricType::kCounter);
  EXPECT_EQ(family->samples.size(), model::kNumSoftirqVecs);
  EXPECT_DOUBLE_EQ(Value(*family, {{"vector", "sched"}}), 7);
  EXPECT_DOUBLE_EQ(Value(*family, {{"vector", "net_rx"}}), 0);
}

TEST(MetricsBuilder, RunqueueHistogramBucketsAreCumulativeLog2) {
  Fixture fx;
  auto fs = BuildMetrics(fx.in);
  const MetricFamily* h = Find(fs, "gpunoise_runqueue_latency_seconds");
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->histograms.size(), 2u);
  const auto& all = h->histograms[0];
  EXPECT_EQ(all.labels, (openmetrics::Labels{{"threads", "all"}}));
  ASSERT_EQ(all.buckets.size(), 26u);  // the last slot only reaches +Inf
  EXPECT_DOUBLE_EQ(all.buckets[0].first, 2e-6);
  EXPECT_EQ(all.buckets[0].second, 5u);
  EXPECT_EQ(all.buckets[2].second, 5u);   // le 8 us
  EXPECT_EQ(all.buckets[3].second, 7u);   // le 16 us
  EXPECT_EQ(all.buckets.back().second, 7u);
  EXPECT_EQ(all.count, 8u);  // +Inf
  EXPECT_DOUBLE_EQ(all.sum, 70.0);
}

TEST(MetricsBuilder, FocusSamplerNetAndKernelSeries) {
  Fixture fx;
  auto fs = BuildMetrics(fx.in);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_focus_preemptions"), {{"cpu", "1"}, {"culprit", "task"}, {"task_class", "other"}}), 7);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_focus_preemptions"), {{"cpu", "1"}, {"culprit", "softirq"}, {"task_class", ""}}), 9);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_focus_interrupted_seconds"), {{"cpu", "1"}, {"culprit", "softirq"}}), 0.003);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_cpu_samples"), {{"cpu", "1"}, {"context", "task"}, {"class", "other"}, {"who", "hog \"x\""}}), 12);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_cpu_samples"), {{"cpu", "1"}, {"context", "softirq"}, {"class", "other"}, {"who", "net_rx"}}), 4);
  // Summed over CPUs per device, queue and direction.
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_net_packets"), {{"device", "eth0"}, {"queue", "0"}, {"direction", "rx"}}), 150);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_net_tx_timeouts"), {{"device", "eth0"}, {"queue", "0"}}), 2);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_napi_full_budget_polls"), {{"device", "eth0"}, {"queue", "0"}, {"cpu", "1"}}), 20);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_net_drops"), {{"device", "eth0"}, {"reason", "NOT_SPECIFIED"}}), 11);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_kernel_trouble_events"), {{"kind", "warn"}}), 3);
}

TEST(MetricsBuilder, KernelLogMessagesByClassAndDeviceWithEveryClassPresent) {
  Fixture fx;
  EXPECT_EQ(Find(BuildMetrics(fx.in), "gpunoise_kernel_log_messages"), nullptr);  // no kernel log read
  fx.in.kernel_log_read = true;
  fx.in.kernel_log[{"tx_timeout", "eth0"}] = 2;
  fx.in.kernel_log[{"soft_lockup", ""}] = 1;
  fx.in.kernel_log_lost = 4;
  auto fs = BuildMetrics(fx.in);
  const MetricFamily* log = Find(fs, "gpunoise_kernel_log_messages");
  ASSERT_NE(log, nullptr);
  EXPECT_DOUBLE_EQ(Value(*log, {{"class", "tx_timeout"}, {"device", "eth0"}}), 2);
  EXPECT_DOUBLE_EQ(Value(*log, {{"class", "soft_lockup"}, {"device", ""}}), 1);
  EXPECT_DOUBLE_EQ(Value(*log, {{"class", "rcu_stall"}, {"device", ""}}), 0);  // present before it happens
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_kernel_log_lost"), {}), 4);
}

TEST(MetricsBuilder, EveryDetectorHasAnActiveSeriesAndATotal) {
  Fixture fx;
  auto fs = BuildMetrics(fx.in);
  const MetricFamily* active = Find(fs, "gpunoise_finding_active");
  ASSERT_NE(active, nullptr);
  EXPECT_EQ(active->samples.size(), 4u);  // softirq_storm, interference, nic_trouble, kernel_log
  EXPECT_DOUBLE_EQ(Value(*active, {{"detector", "softirq_storm"}}), 1);
  EXPECT_DOUBLE_EQ(Value(*active, {{"detector", "interference"}}), 0);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_findings"), {{"detector", "softirq_storm"}}), 2);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_findings"), {{"detector", "nic_trouble"}}), 0);
  const MetricFamily* info = Find(fs, "gpunoise_finding");
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->samples.size(), 1u);
}

TEST(MetricsBuilder, GpuSeriesInBaseUnitsWithOneSeriesPerThrottleReason) {
  Fixture fx;
  auto fs = BuildMetrics(fx.in);
  const MetricFamily* info = Find(fs, "gpunoise_gpu");
  ASSERT_TRUE(info);
  EXPECT_EQ(Value(*info, {{"gpu", "0"}, {"name", "NVIDIA H200"}, {"uuid", "GPU-e18f42ea"}}), 1);
  openmetrics::Labels gpu0 = {{"gpu", "0"}};
  EXPECT_EQ(Value(*Find(fs, "gpunoise_gpu_sm_clock_hertz"), gpu0), 1.98e9);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_gpu_utilization_ratio"), gpu0), 0.87);
  EXPECT_DOUBLE_EQ(Value(*Find(fs, "gpunoise_gpu_memory_utilization_ratio"), gpu0), 0.40);
  EXPECT_EQ(Value(*Find(fs, "gpunoise_gpu_memory_used_bytes"), gpu0), 2.0e9);
  EXPECT_EQ(Value(*Find(fs, "gpunoise_gpu_temperature_celsius"), gpu0), 51);
  EXPECT_EQ(Value(*Find(fs, "gpunoise_gpu_power_watts"), gpu0), 412.5);
  const MetricFamily* held = Find(fs, "gpunoise_gpu_clocks_held_back");
  ASSERT_TRUE(held);
  EXPECT_EQ(Value(*held, {{"gpu", "0"}, {"reason", "sw_power_cap"}}), 1);
  EXPECT_EQ(Value(*held, {{"gpu", "0"}, {"reason", "hw_slowdown"}}), 0);
  for (const auto& sample : held->samples)
    for (const auto& [k, v] : sample.labels) EXPECT_NE(v, "gpu_idle") << "idle is not a limit";
}

TEST(MetricsBuilder, NoGpusNoGpuFamilies) {
  Fixture fx;
  fx.in.gpus.clear();
  fx.in.gpu_samples.clear();
  for (const auto& f : BuildMetrics(fx.in)) EXPECT_EQ(f.name.rfind("gpunoise_gpu", 0), std::string::npos) << f.name;
}

TEST(MetricsBuilder, EmptyInputStillGivesValidFamilies) {
  MetricsInput in;
  for (const auto& f : BuildMetrics(in)) EXPECT_TRUE(openmetrics::Validate(f).ok()) << f.name;
}

TEST(MetricsBuilder, PromtoolChecksTheWholeExposition) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0)
    GN_SKIP_MISSING_TOOL("promtool is not installed (Debian package prometheus)");
  Fixture fx;
  auto fs = BuildMetrics(fx.in);
  std::string text;
  openmetrics::Render(fs, openmetrics::Format::kPrometheusText, &text);
  char path[] = "/tmp/gn_metrics_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  std::string cmd = std::string("promtool check metrics < ") + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p && fgets(buf, sizeof(buf), p)) out += buf;
  int rc = p ? pclose(p) : -1;
  unlink(path);
  // promtool's lint also flags style (e.g. counters without _total); an
  // exit status of 0 means no problem at all.
  EXPECT_EQ(rc, 0) << out;
}

}  // namespace
}  // namespace gpunoise::monitor
