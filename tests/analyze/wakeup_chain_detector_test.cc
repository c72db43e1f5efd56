#include "analyze/wakeup_chain_detector.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kA = 10, kB = 20, kFocus = 100, kHog = 200;

// 100 rounds of 10 ms: A on CPU 0 wakes B (CPU 1); B waits `b_wait` behind
// the hog, runs, wakes the focus thread (CPU 2), which runs 1 ms and sleeps.
// `focus_flags`/`b_flags`: the context of B's wakeup of the focus thread and
// of A's wakeup of B (a NET_RX softirq for A's when set).
Synth Chain(uint64_t b_wait, uint16_t focus_flags = 0, uint16_t b_flags = 0) {
  Synth s;
  s.Process(kA, "app").Thread(kA, kA, "stage-a").Thread(kB, kA, "stage-b").Thread(kFocus, kA, "trainer");
  s.Process(kHog, "hog").Thread(kHog, kHog, "hog");
  s.Switch(kBase, 1, 0, kHog);
  for (int i = 0; i < 100; ++i) {
    uint64_t t0 = kBase + i * 10 * kMs;
    s.Switch(t0, 0, 0, kA);
    if (b_flags) s.Softirq(0, t0 + 40 * kUs, t0 + 60 * kUs, 3);
    s.WakeBy(t0 + 50 * kUs, 0, kA, kB, 1, b_flags);
    s.Switch(t0 + 100 * kUs, 0, kA, 0, 1);
    uint64_t b_run = t0 + 50 * kUs + b_wait;
    s.Switch(b_run, 1, kHog, kB, 256);
    s.WakeBy(b_run + 50 * kUs, 1, kB, kFocus, 2, focus_flags);
    s.Switch(b_run + 100 * kUs, 1, kB, kHog, 1);
    s.Switch(b_run + 60 * kUs, 2, 0, kFocus);
    s.Switch(b_run + 60 * kUs + 1 * kMs, 2, kFocus, 0, 1);
  }
  return s;
}

TEST(WakeupChain, AHogDelayingTheWakerNamesTheLateLink) {
  Synth s = Chain(3 * kMs);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "wakeup_chain");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.culprit_tid, kHog) << f.culprit;
  EXPECT_EQ(f.Metric("late_waker_tid"), kB);
  EXPECT_EQ(f.Metric("chains"), 100);
  EXPECT_EQ(f.cpus, std::vector<uint32_t>{1});
  EXPECT_EQ(f.focus_tids, std::vector<int32_t>{kFocus});
  EXPECT_NEAR(static_cast<double>(f.cost_ns), 100 * 3.0 * kMs, 1.0 * kMs);
  bool chain_line = false;
  for (const auto& e : f.evidence)
    chain_line |= e.find("stage-a") != std::string::npos && e.find("stage-b") != std::string::npos &&
                  e.find("(late: waited 300 ms") != std::string::npos;
  EXPECT_TRUE(chain_line) << f.evidence[1];
  // Nothing kept the focus thread itself waiting.
  EXPECT_TRUE(FindingsOf(a, "interference").empty());
}

TEST(WakeupChain, APromptWakerIsNoChain) {
  Synth s = Chain(20 * kUs);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "wakeup_chain").empty());
}

TEST(WakeupChain, AWakeupFromSoftirqContextIsTheSoftirqsNotTheInterruptedTasks) {
  // B is current on CPU 1 when the focus thread's wakeup fires, but in a
  // softirq: B did not wake it, and B's delay is not the focus thread's.
  Synth s = Chain(3 * kMs, model::kFlagSoftirq);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "wakeup_chain").empty());
}

TEST(WakeupChain, AFirstLinkFromASoftirqIsNamedAsTheSoftirq) {
  Synth s = Chain(3 * kMs, 0, model::kFlagSoftirq);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "wakeup_chain");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].title.find("after softirq NET_RX woke it"), std::string::npos) << found[0].title;
}

}  // namespace
}  // namespace gpunoise::analyze
