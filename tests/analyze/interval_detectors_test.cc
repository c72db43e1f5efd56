#include "analyze/interval_detectors.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpunoise::analyze {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

struct Interval {
  model::AggregateSnapshot delta;
  model::IrqTable irqs;
  model::NetNames names;
  Thresholds thresholds;
  IntervalContext Context() {
    IntervalContext c;
    c.delta = &delta;
    c.start = 10 * kSecond;
    c.end = 11 * kSecond;
    c.irqs = &irqs;
    c.names = &names;
    c.thresholds = &thresholds;
    return c;
  }
};

void NetRx(Interval& in, uint32_t cpu, uint64_t ns, uint64_t count) {
  model::SoftirqCpuCounters c;
  c.cpu = cpu;
  c.ns[3] = ns;
  c.count[3] = count;
  in.delta.softirqs.push_back(c);
}

TEST(IntervalSoftirqStorm, FiresAboveTheShareAndNamesTheDrivingQueue) {
  Interval in;
  NetRx(in, 0, 450'000'000, 250'000);  // 45% of a 1 s interval
  NetRx(in, 1, 100'000'000, 50'000);   // 10%: quiet
  in.names.devices[{7, 3}] = "eth0";
  in.delta.net.napi.push_back({{7, 3}, 11, 5, 40, 0, 240'000, 10, 250'000});
  in.delta.net.napi.push_back({{7, 3}, 12, 6, 41, 0, 1'000, 0, 1'000});
  model::IrqInfo irq;
  irq.irq = 40;
  irq.name = "eth0-TxRx-5";
  irq.device = "eth0";
  irq.queue = 5;
  in.irqs[40] = irq;
  in.delta.hardirqs.push_back({0, 40, 9000, 9'000'000});
  auto findings = DetectIntervalSoftirqStorms(in.Context());
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.detector, "softirq_storm");
  // The report's kind and culprit (storm_core.h).
  EXPECT_EQ(f.kind, "softirq_share");
  EXPECT_EQ(f.culprit, "softirq NET_RX from eth0@7 queue 5");
  EXPECT_EQ(f.cpus, std::vector<uint32_t>{0});
  EXPECT_EQ(f.device, "eth0@7");
  EXPECT_EQ(f.queue, 5);
  EXPECT_EQ(f.culprit_irq, 40);
  EXPECT_DOUBLE_EQ(f.Metric("share"), 0.45);
  EXPECT_EQ(f.start, 10 * kSecond);
  EXPECT_NE(f.title.find("NET_RX softirqs took 45% of CPU 0"), std::string::npos) << f.title;
  EXPECT_NE(f.title.find("eth0@7 queue 5"), std::string::npos) << f.title;
}

TEST(IntervalSoftirqStorm, ThresholdIsSettable) {
  Interval in;
  NetRx(in, 0, 450'000'000, 250'000);
  ASSERT_TRUE(in.thresholds.Set("softirq.share=50%").ok());
  EXPECT_TRUE(DetectIntervalSoftirqStorms(in.Context()).empty());
}

TEST(IntervalSoftirqStorm, KsoftirqdShareFromTheSampler) {
  Interval in;
  model::SampleCounter s;
  s.cpu = 2;
  s.task_class = model::TaskClass::kKernel;
  s.comm = model::TaskComm("ksoftirqd/2");
  s.count = 20;
  in.delta.samples.push_back(s);
  s.comm = model::TaskComm("python");
  s.task_class = model::TaskClass::kFocus;
  s.count = 29;
  in.delta.samples.push_back(s);
  auto findings = DetectIntervalSoftirqStorms(in.Context());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, "ksoftirqd");
  // The report's culprit: the vector ksoftirqd runs (NET_RX when the
  // interval says nothing else), not the thread.
  EXPECT_EQ(findings[0].culprit, "softirq NET_RX");
  EXPECT_NEAR(findings[0].Metric("share"), 20.0 / 49.0, 1e-3);
  // Too few samples say nothing.
  in.delta.samples[0].count = 3;
  in.delta.samples[1].count = 2;
  EXPECT_TRUE(DetectIntervalSoftirqStorms(in.Context()).empty());
}

model::RunqueueCulprit Culprit(uint32_t cpu, int32_t tid, int32_t tgid, const char* comm, uint64_t wait_ns) {
  model::RunqueueCulprit c;
  c.cpu = cpu;
  c.tid = tid;
  c.tgid = tgid;
  c.comm = model::TaskComm(comm);
  c.wait_ns = wait_ns;
  c.waits = 1;
  return c;
}

TEST(IntervalInterference, EachTaskThatHadTheCpuWhileFocusThreadsWaitedIsJudgedOnItsOwn) {
  Interval in;
  model::FocusCpuCounters f;
  f.cpu = 1;
  f.oncpu_ns = 600'000'000;
  f.wait_preempted_ns = 200'000'000;
  f.wait_woken_ns = 20'000'000;
  f.softirq_ns = 5'000'000;
  f.preempted_by[static_cast<int>(model::TaskClass::kOther)] = 150;
  in.delta.focus.push_back(f);
  // stress-ng's waits on two CPUs add up; the 8 ms of the other task are
  // under interference.min_delay (10 ms), as are the 5 ms of softirqs.
  in.delta.culprits.push_back(Culprit(1, 4242, 4242, "stress-ng", 150'000'000));
  in.delta.culprits.push_back(Culprit(2, 4242, 4242, "stress-ng", 40'000'000));
  in.delta.culprits.push_back(Culprit(1, 5151, 5150, "worker", 8'000'000));
  auto findings = DetectIntervalInterference(in.Context());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].detector, "interference");
  EXPECT_EQ(findings[0].kind, "run_queue_delay");
  EXPECT_EQ(findings[0].culprit, "stress-ng (pid 4242)");
  EXPECT_EQ(findings[0].culprit_kind, "task");
  EXPECT_EQ(findings[0].culprit_tid, 4242);
  EXPECT_EQ(findings[0].cpus, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(findings[0].cost_ns, 190'000'000u);
  EXPECT_NEAR(findings[0].cost_share, 190.0 / 820.0, 1e-9);
  // A thread of another process is named with its process.
  in.delta.culprits[2].wait_ns = 80'000'000;
  findings = DetectIntervalInterference(in.Context());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[1].culprit, "worker (tid 5151, pid 5150)");
  EXPECT_EQ(findings[1].cost_ns, 80'000'000u);
}

TEST(IntervalInterference, GpunoisesOwnThreadsAreLeftOutAsTheReportLeavesOutTheRecorder) {
  Interval in;
  model::FocusCpuCounters f;
  f.cpu = 1;
  f.oncpu_ns = 600'000'000;
  f.wait_preempted_ns = 200'000'000;
  in.delta.focus.push_back(f);
  in.delta.culprits.push_back(Culprit(1, 77, 77, "gpunoise", 200'000'000));
  EXPECT_TRUE(DetectIntervalInterference(in.Context()).empty());
}

TEST(IntervalInterference, InterruptsWhileFocusThreadsWaitedCountForTheInterrupts) {
  Interval in;
  model::FocusCpuCounters f;
  f.cpu = 1;
  f.oncpu_ns = 600'000'000;
  f.wait_woken_ns = 200'000'000;
  f.softirq_ns = 4'000'000;        // over running focus threads
  f.wait_softirq_ns = 30'000'000;  // while they waited
  f.wait_unknown_ns = 3'000'000;
  in.delta.focus.push_back(f);
  model::SoftirqCpuCounters sc;
  sc.cpu = 1;
  sc.ns[3] = 34'000'000;
  in.delta.softirqs.push_back(sc);
  in.delta.culprits.push_back(Culprit(1, 4242, 4242, "stress-ng", 150'000'000));
  auto findings = DetectIntervalInterference(in.Context());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].culprit_kind, "task");
  EXPECT_EQ(findings[1].culprit, "softirq NET_RX");
  EXPECT_EQ(findings[1].kind, "run_queue_delay");  // more waiting than interrupting
  EXPECT_EQ(findings[1].cost_ns, 34'000'000u);
  // The unknown part is said, not charged.
  bool said = false;
  for (const auto& e : findings[0].evidence) said |= e.find("3.0 ms of the waits") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(IntervalInterference, InterruptsAsCulpritAndQuietBelowThresholds) {
  Interval in;
  model::FocusCpuCounters f;
  f.cpu = 1;
  f.oncpu_ns = 900'000'000;
  f.hardirq_ns = 60'000'000;
  in.delta.focus.push_back(f);
  auto findings = DetectIntervalInterference(in.Context());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, "interrupted");
  EXPECT_EQ(findings[0].culprit_kind, "hardirq");
  in.delta.focus[0].hardirq_ns = 5'000'000;  // under interference.min_delay (10 ms)
  EXPECT_TRUE(DetectIntervalInterference(in.Context()).empty());
  in.delta.focus.clear();  // no focus threads: nothing to say
  EXPECT_TRUE(DetectIntervalInterference(in.Context()).empty());
}

TEST(IntervalNicTrouble, TimeoutsFullBudgetDropsAndKernelCounters) {
  Interval in;
  in.names.own_netns = 7;
  in.names.devices[{7, 3}] = "eth0";
  in.names.drop_reasons[3] = "NETFILTER_DROP";
  in.delta.net.devices.push_back({{7, 3}, 2, model::NetDirection::kTxTimeout, 0, 1, 0, 0});
  in.delta.net.napi.push_back({{7, 3}, 11, 0, 40, 1, 5000, 400, 300000});
  in.delta.net.drops.push_back({{7, 3}, 3, 0x1234, 0, 150, 9000});
  in.delta.net.drops.push_back({{7, 3}, 3, 0x1234, 1, 20, 1200});
  in.delta.kernel["softlockup_count"] = 1;
  in.delta.kernel["warn_count"] = 0;
  in.delta.dql_stalls = 2;
  auto findings = DetectIntervalNicTrouble(in.Context());
  std::map<std::string, const Finding*> by_kind;
  for (const auto& f : findings) by_kind[f.kind] = &f;
  ASSERT_TRUE(by_kind.count("tx_timeout"));
  EXPECT_EQ(by_kind["tx_timeout"]->device, "eth0");
  EXPECT_EQ(by_kind["tx_timeout"]->queue, 2);
  ASSERT_TRUE(by_kind.count("napi_full_budget"));
  EXPECT_EQ(by_kind["napi_full_budget"]->cpus, std::vector<uint32_t>{1});
  ASSERT_TRUE(by_kind.count("drops"));
  EXPECT_EQ(by_kind["drops"]->culprit, "eth0 (NETFILTER_DROP)");
  EXPECT_DOUBLE_EQ(by_kind["drops"]->Metric("drops_per_s"), 170);
  // The report's kind for the kernel's trouble counters; warn_count did not
  // rise, so one finding.
  ASSERT_TRUE(by_kind.count("kernel_health"));
  EXPECT_EQ(std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.kind == "kernel_health"; }),
            1);
  EXPECT_NE(by_kind["kernel_health"]->title.find("softlockup"), std::string::npos);
  EXPECT_TRUE(by_kind.count("dql_stall"));
  for (const auto& f : findings) EXPECT_EQ(f.detector, "nic_trouble");
}

TEST(IntervalNicTrouble, NicInterruptsOnFocusCpus) {
  Interval in;
  model::IrqInfo irq;
  irq.irq = 50;
  irq.name = "mlx5_comp3";
  irq.device = "eth1";
  irq.queue = 3;
  in.irqs[50] = irq;
  model::FocusCpuCounters f;
  f.cpu = 4;
  f.oncpu_ns = 1'000'000'000;
  in.delta.focus.push_back(f);
  in.delta.hardirqs.push_back({4, 50, 500, 20'000'000});
  in.delta.hardirqs.push_back({9, 50, 5000, 90'000'000});  // not a focus CPU
  auto findings = DetectIntervalNicTrouble(in.Context());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, "irq_affinity_overlap");
  EXPECT_EQ(findings[0].device, "eth1");
  EXPECT_EQ(findings[0].cpus, std::vector<uint32_t>{4});
  EXPECT_DOUBLE_EQ(findings[0].Metric("irqs"), 500);
  in.delta.hardirqs[0].count = 50;  // under nic.irq_overlap_min
  EXPECT_TRUE(DetectIntervalNicTrouble(in.Context()).empty());
}

TEST(IntervalDetectors, AQuietIntervalHasNoFindings) {
  Interval in;
  NetRx(in, 0, 10'000'000, 3000);
  in.delta.kernel["warn_count"] = 0;
  EXPECT_TRUE(DetectIntervalFindings(in.Context()).empty());
}

}  // namespace
}  // namespace gpunoise::analyze
