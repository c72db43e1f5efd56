#include "analyze/placement_detector.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100, kHog = 200;
constexpr uint64_t kMeta = 901;

void Affinity(Synth& s, int32_t tid, const char* cpus) {
  model::TrackEventRecord e;
  e.ts = kBase;
  e.track_uuid = kMeta;
  e.type = model::TrackEventType::kInstant;
  e.name = "affinity";
  model::TrackArg t;
  t.name = "tid";
  t.int_value = tid;
  model::TrackArg c;
  c.name = "cpus";
  c.type = model::TrackArg::Type::kString;
  c.string_value = cpus;
  e.args = {t, c};
  s.builder().OnTrackEvent(e);
}

// The focus thread and a hog share CPU 1 for 1 s (4 ms each in turn) while
// CPU 0 sits idle; the focus thread's affinity is `focus_cpus`.
Synth HogBesideIdleCpu(const char* focus_cpus) {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Process(kHog, "hog").Thread(kHog, kHog, "hog");
  s.Alternate(1, kBase, kBase + 1000 * kMs, kFocus, 4 * kMs, kHog, 4 * kMs);
  // CPU 0: idle from the start (a short task at both ends gives it data).
  s.Switch(kBase, 0, 0, 300).Switch(kBase + 10 * kUs, 0, 300, 0, 1);
  s.Switch(kBase + 1000 * kMs, 0, 0, 300).Switch(kBase + 1000 * kMs + 10 * kUs, 0, 300, 0, 1);
  s.Thread(300, 300, "other").Process(300, "other");
  s.builder().OnTrack({kMeta, 0, "gpunoise node", 0, 0, false});
  Affinity(s, kFocus, focus_cpus);
  Affinity(s, kHog, "1");
  return s;
}

TEST(Placement, AWaitBesideAnIdleAllowedCpuNamesTheIdleCpuAndTheMask) {
  Synth s = HogBesideIdleCpu("0-1");
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "placement");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.Metric("idle_cpu"), 0);
  EXPECT_EQ(f.Metric("allowed_cpus"), 2);
  EXPECT_EQ(f.cpus, std::vector<uint32_t>{1});
  EXPECT_EQ(f.focus_tids, std::vector<int32_t>{kFocus});
  EXPECT_NEAR(static_cast<double>(f.cost_ns), 500.0 * kMs, 5.0 * kMs);
  EXPECT_NE(f.culprit.find("CPU 0 idle, allowed CPUs 0-1"), std::string::npos) << f.culprit;
  // The hog is still named for the delay itself.
  EXPECT_EQ(FindingsOf(a, "interference").size(), 1u);
}

TEST(Placement, APinnedThreadHasNowhereElseToGo) {
  Synth s = HogBesideIdleCpu("1");
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "placement").empty());
  EXPECT_EQ(FindingsOf(a, "interference").size(), 1u) << "interference instead";
}

TEST(Placement, WithoutAffinityDataNoFinding) {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Process(kHog, "hog").Thread(kHog, kHog, "hog");
  s.Alternate(1, kBase, kBase + 1000 * kMs, kFocus, 4 * kMs, kHog, 4 * kMs);
  s.Switch(kBase, 0, 0, 300).Switch(kBase + 10 * kUs, 0, 300, 0, 1);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "placement").empty());
}

TEST(Placement, ShortIdleStretchesAreTheBalancersLatency) {
  Synth s = HogBesideIdleCpu("0-1");
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"}, {"placement.min_idle=5ms"});
  EXPECT_TRUE(FindingsOf(a, "placement").empty()) << "each idle stretch within a wait is 4 ms";
}

}  // namespace
}  // namespace gpunoise::analyze
