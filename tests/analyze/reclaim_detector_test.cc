#include "analyze/reclaim_detector.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100;

void Stall(Synth& s, uint64_t track, uint64_t begin, uint64_t end, const char* name) {
  model::TrackEventRecord b;
  b.ts = begin;
  b.track_uuid = track;
  b.type = model::TrackEventType::kSliceBegin;
  b.name = name;
  b.category = "gpunoise.memstall";
  s.builder().OnTrackEvent(b);
  model::TrackEventRecord e;
  e.ts = end;
  e.track_uuid = track;
  e.type = model::TrackEventType::kSliceEnd;
  s.builder().OnTrackEvent(e);
}

// The focus thread runs on CPU 1 for 1 s and stalls `n` times for 2 ms in
// memcg reclaim, each with a 1 ms reclaim throttle inside it.
Timeline Stalled(int n) {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Switch(kBase, 1, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 1, kFocus, 0, 1);
  s.builder().OnTrack({800, 0, "trainer", kFocus, kFocus, false});
  s.builder().OnTrack({801, 0, "trainer", kFocus, kFocus, false});
  for (int i = 0; i < n; ++i) {
    uint64_t t0 = kBase + 10 * kMs + i * 10 * kMs;
    Stall(s, 801, t0 + 500 * kUs, t0 + 1500 * kUs, "reclaim throttled");
    Stall(s, 800, t0, t0 + 2 * kMs, "memcg reclaim");
  }
  return s.Build();
}

TEST(Reclaim, StallsOnTheFocusThreadsTrackAreNamedByKind) {
  Timeline t = Stalled(20);
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "reclaim");
  ASSERT_EQ(found.size(), 2u);
  const Finding* memcg = found[0].kind == "memcg_reclaim" ? &found[0] : &found[1];
  EXPECT_EQ(memcg->kind, "memcg_reclaim");
  EXPECT_EQ(memcg->cost_ns, 20 * 2 * kMs);
  EXPECT_EQ(memcg->Metric("stalls"), 20);
  EXPECT_EQ(memcg->cpus, std::vector<uint32_t>{1});
  // The CPUS column counts nested stalls once.
  for (const auto& c : a.cpus)
    if (c.cpu == 1) {
      EXPECT_EQ(c.reclaim_ns, 20 * 2 * kMs);
    }
}

TEST(Reclaim, AFewShortStallsAreNoFinding) {
  Timeline t = Stalled(2);  // 4 ms: under reclaim.min_delay
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "reclaim").empty());
}

}  // namespace
}  // namespace gpunoise::analyze
