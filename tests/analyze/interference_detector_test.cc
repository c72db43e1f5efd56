#include "analyze/interference_detector.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100, kHog = 200, kOther = 300;

Synth Named() {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Process(kHog, "hog").Thread(kHog, kHog, "hog");
  s.Process(kOther, "other").Thread(kOther, kOther, "other");
  s.IrqName(45, "eth0-TxRx-1");
  return s;
}

TEST(Interference, AHogSharingTheFocusCpuIsNamedWithTheDelayItCaused) {
  Synth s = Named();
  // 1 s on CPU 1: the focus thread runs 4 ms, the hog 4 ms, and so on.
  s.Alternate(1, kBase, kBase + 1000 * kMs, kFocus, 4 * kMs, kHog, 4 * kMs);
  s.RunSleep(0, kBase, kBase + 1000 * kMs, kOther, 1 * kMs, 9 * kMs, 20 * kUs);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "interference");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.culprit_tid, kHog);
  EXPECT_EQ(f.kind, "run_queue_delay");
  EXPECT_NE(f.culprit.find("hog (pid 200)"), std::string::npos) << f.culprit;
  EXPECT_EQ(f.cpus, std::vector<uint32_t>{1});
  EXPECT_EQ(f.focus_tids, std::vector<int32_t>{kFocus});
  // Every preemption waited 4 ms behind the hog: half the second.
  EXPECT_NEAR(static_cast<double>(f.cost_ns), 500.0 * kMs, 5.0 * kMs);
  EXPECT_NEAR(f.Metric("waits"), 125, 1);
  EXPECT_NEAR(f.cost_share, 0.5, 0.01);
  ASSERT_FALSE(f.windows.empty());
  EXPECT_NEAR(static_cast<double>(f.windows[0].cost_ns), 50.0 * kMs, 4.0 * kMs);
  EXPECT_EQ(a.findings.front().culprit_tid, kHog) << "it is the costliest finding";
}

TEST(Interference, AQuietFocusThreadHasNoFinding) {
  Synth s = Named();
  // Runs 2 ms, sleeps 8 ms, woken 15 us late by an idle CPU; timer ticks.
  s.RunSleep(1, kBase, kBase + 2000 * kMs, kFocus, 2 * kMs, 8 * kMs, 15 * kUs);
  s.PeriodicIrq(1, kBase, kBase + 2000 * kMs, 45, 4 * kMs, 3 * kUs);
  s.PeriodicSoftirq(1, kBase, kBase + 2000 * kMs, 1, 4 * kMs, 5 * kUs);
  s.RunSleep(0, kBase, kBase + 2000 * kMs, kOther, 1 * kMs, 30 * kMs, 20 * kUs);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(a.findings.empty()) << a.findings.front().title;
  // The waits are still measured and attributed, just too small to matter.
  ASSERT_EQ(a.focus_threads.size(), 1u);
  EXPECT_GT(a.focus_threads[0].wait_ns, 0u);
  EXPECT_FALSE(a.top_delays.empty());
  EXPECT_EQ(a.top_delays[0].ran_instead[0].kind, "idle");
}

TEST(Interference, InterruptsOfARunningFocusThreadAreAttributedByIrqAndVector) {
  Synth s = Named();
  s.Switch(kBase, 1, 0, kFocus);
  // 20% of the CPU in eth0's IRQ, 10% in NET_RX, while the focus thread runs.
  s.PeriodicIrq(1, kBase, kBase + 1000 * kMs, 45, 1 * kMs, 200 * kUs);
  s.PeriodicSoftirq(1, kBase, kBase + 1000 * kMs, 3, 1 * kMs, 100 * kUs);
  s.Switch(kBase + 1000 * kMs, 1, kFocus, 0, 1);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"100"});
  auto found = FindingsOf(a, "interference");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].culprit_kind, "hardirq");
  EXPECT_EQ(found[0].culprit_irq, 45);
  EXPECT_EQ(found[0].kind, "interrupted");
  EXPECT_NE(found[0].culprit.find("eth0-TxRx-1"), std::string::npos);
  EXPECT_EQ(found[0].device, "eth0");
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 200.0 * kMs, 2.0 * kMs);
  EXPECT_EQ(found[1].culprit, "softirq NET_RX");
  EXPECT_NEAR(static_cast<double>(found[1].cost_ns), 100.0 * kMs, 2.0 * kMs);
}

TEST(Interference, TheWindowCutsWaitsAtItsEdges) {
  Synth s = Named();
  s.Alternate(1, kBase, kBase + 1000 * kMs, kFocus, 4 * kMs, kHog, 4 * kMs);
  Timeline t = s.Build();
  AnalysisOptions options;
  options.focus = {"trainer"};
  // 250 ms from 2 ms in: starts inside a wait (4..8 ms is the hog's).
  options.window_start = 6 * kMs;
  options.window_end = 256 * kMs;
  auto a = Analyze(t, options);
  ASSERT_TRUE(a.ok()) << a.error().message;
  auto found = FindingsOf(*a, "interference");
  ASSERT_EQ(found.size(), 1u);
  // 2 ms of the wait cut by the start, 30 whole 4 ms waits, one ending at the end.
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 126.0 * kMs, 0.5 * kMs);
  EXPECT_GE(found[0].start, kBase + 6 * kMs);
  EXPECT_LE(found[0].end, kBase + 256 * kMs);
}

TEST(Interference, AWaitAcrossAnEnormousSpanCostsItsSlicesNotItsWindows) {
  // A corrupt or hostile trace: the focus thread, preempted by the hog,
  // runs again 2^60 ns later. Cutting the wait into 100 ms windows would be
  // 11 billion pieces; the hog's cost and worst window come from two slices.
  Synth s = Named();
  constexpr uint64_t kFar = uint64_t{1} << 60;
  s.Switch(kBase, 1, 0, kFocus);
  s.Switch(kBase + 10 * kMs, 1, kFocus, kHog, 0);
  s.Switch(kBase + kFar, 1, kHog, kFocus);
  s.Switch(kBase + kFar + 10 * kMs, 1, kFocus, 0, 1);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "interference");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].culprit_tid, kHog);
  EXPECT_EQ(found[0].cost_ns, kFar - 10 * kMs);
  ASSERT_EQ(found[0].windows.size(), 3u);
  EXPECT_EQ(found[0].windows[0].cost_ns, 100 * kMs) << "a full window behind the hog";
  EXPECT_EQ(found[0].windows[0].start, kBase + 100 * kMs);
}

TEST(Interference, AWaitThatMigratesIsSplitBetweenTheCpusItWaitedOn) {
  Synth s = Named();
  s.Process(kOther + 1, "hog2").Thread(kOther + 1, kOther + 1, "hog2");
  // 100 rounds: the focus thread runs 2 ms on CPU 1, is preempted by the
  // hog, waits 3 ms there, migrates to CPU 0 where hog2 runs 5 ms more, then
  // runs on CPU 0 and goes back to CPU 1 by a wakeup.
  uint64_t t = kBase;
  s.Switch(t, 0, 0, kOther + 1);
  s.Switch(t, 1, 0, kFocus);
  for (int i = 0; i < 100; ++i) {
    s.Switch(t + 2 * kMs, 1, kFocus, kHog, 256);
    s.Migrate(t + 5 * kMs, 0, kFocus, 1, 0);
    s.Switch(t + 10 * kMs, 0, kOther + 1, kFocus, 256);
    s.Switch(t + 11 * kMs, 0, kFocus, kOther + 1, 1);
    s.Wake(t + 12 * kMs, 1, kFocus, 1);
    s.Switch(t + 12 * kMs, 1, kHog, kFocus, 256);
    t += 12 * kMs;
  }
  Timeline tl = s.Build();
  Analysis a = AnalyzeOrDie(tl, {"trainer"});
  auto found = FindingsOf(a, "interference");
  ASSERT_EQ(found.size(), 2u);
  // Ranked: hog2 (5 ms per round on CPU 0) before the hog (3 ms on CPU 1).
  EXPECT_EQ(found[0].culprit_tid, kOther + 1);
  EXPECT_EQ(found[0].cpus, std::vector<uint32_t>{0});
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 500.0 * kMs, 1.0 * kMs);
  EXPECT_EQ(found[1].culprit_tid, kHog);
  EXPECT_EQ(found[1].cpus, std::vector<uint32_t>{1});
  EXPECT_NEAR(static_cast<double>(found[1].cost_ns), 300.0 * kMs, 1.0 * kMs);
}

TEST(Interference, TimeWithLostEventsIsNotBlamedOnAnyone) {
  Synth s = Named();
  s.Alternate(1, kBase, kBase + 400 * kMs, kFocus, 4 * kMs, kHog, 4 * kMs);
  // Events of CPU 1 lost from 400 ms to 800 ms, then the pattern resumes.
  s.Loss(1, kBase + 400 * kMs, kBase + 800 * kMs);
  s.Alternate(1, kBase + 800 * kMs, kBase + 1000 * kMs, kFocus, 4 * kMs, kHog, 4 * kMs);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "interference");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].culprit_tid, kHog);
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 300.0 * kMs, 5.0 * kMs);
  bool mentions_loss = false;
  for (const auto& e : found[0].evidence) mentions_loss |= e.find("lost") != std::string::npos;
  EXPECT_TRUE(mentions_loss);
  EXPECT_EQ(a.loss.cpus.size(), 1u);
  EXPECT_EQ(a.loss.cpus[0].loss_spans, 1u);
}

TEST(Interference, TheRecorderItselfIsLeftOutOfTheFindings) {
  Synth s = Named();
  s.Process(kOther + 2, "gpunoise").Thread(kOther + 2, kOther + 2, "gpunoise");
  s.Alternate(1, kBase, kBase + 1000 * kMs, kFocus, 4 * kMs, kOther + 2, 4 * kMs);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "interference").empty());
  EXPECT_NEAR(static_cast<double>(a.recorder_cost_ns), 500.0 * kMs, 5.0 * kMs);
}

TEST(Interference, ThresholdsDecide) {
  Synth s = Named();
  // The hog takes 1 ms every 100 ms: 10 ms in 1 s, 1% of the time.
  s.Alternate(1, kBase, kBase + 1000 * kMs, kFocus, 99 * kMs, kHog, 1 * kMs);
  Timeline t = s.Build();
  EXPECT_EQ(FindingsOf(AnalyzeOrDie(t, {"trainer"}, {"interference.min_delay=20ms"}), "interference").size(), 0u);
  EXPECT_EQ(FindingsOf(AnalyzeOrDie(t, {"trainer"}, {"interference.min_delay=5ms"}), "interference").size(), 1u);
  EXPECT_EQ(FindingsOf(AnalyzeOrDie(t, {"trainer"}, {"interference.min_delay=5ms", "interference.min_share=5%"}),
                       "interference")
                .size(),
            0u);
}

}  // namespace
}  // namespace gpunoise::analyze
