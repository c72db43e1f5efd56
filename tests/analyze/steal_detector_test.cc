#include "analyze/steal_detector.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100;

// The focus thread runs on CPU 1 for 1 s; the hypervisor steals `share` of
// CPU `stolen_cpu` (samples every 100 ms, the last one closing the track).
Timeline Stolen(double share, uint32_t stolen_cpu = 1) {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Switch(kBase, 1, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 1, kFocus, 0, 1);
  s.Switch(kBase, 0, 0, 300).Switch(kBase + 1000 * kMs, 0, 300, 0, 1);
  s.builder().OnTrack({900, 0, "Node", 0, 0, false});
  s.builder().OnTrack({901, 900, "cpu" + std::to_string(stolen_cpu) + " steal", 0, 0, true});
  for (int i = 0; i <= 10; ++i) {
    model::TrackEventRecord c;
    c.ts = kBase + i * 100 * kMs;
    c.track_uuid = 901;
    c.type = model::TrackEventType::kCounter;
    c.counter_value = i < 10 ? share : 0;
    s.builder().OnTrackEvent(c);
  }
  return s.Build();
}

TEST(Steal, StealWhileAFocusThreadRanIsNamedWithItsTime) {
  Timeline t = Stolen(0.2);
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "steal");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 200.0 * kMs, 1.0 * kMs);
  EXPECT_EQ(found[0].cpus, std::vector<uint32_t>{1});
  EXPECT_EQ(found[0].culprit_kind, "hypervisor");
  EXPECT_NEAR(found[0].Metric("running_share"), 0.2, 0.01);
  // The CPUS table's steal column: the same share of CPU 1.
  for (const auto& c : a.cpus)
    if (c.cpu == 1) {
      EXPECT_NEAR(static_cast<double>(c.steal_ns), 200.0 * kMs, 1.0 * kMs);
    }
}

TEST(Steal, ANearMissBelowTheThresholdIsNoFinding) {
  Timeline t = Stolen(0.005);  // 5 ms of 1 s: under 10 ms and 1%
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "steal").empty());
}

TEST(Steal, StealOnAnotherCpuIsNotTheFocusThreads) {
  Timeline t = Stolen(0.5, 0);
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "steal").empty());
}

}  // namespace
}  // namespace gpunoise::analyze
