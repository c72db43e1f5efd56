#include "analyze/throttling_detector.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100, kOther = 300;
constexpr uint64_t kRoot = 900, kMeta = 901;

void AddCounter(Synth& s, uint64_t uuid, const std::string& name,
                const std::vector<std::pair<uint64_t, double>>& samples) {
  s.builder().OnTrack({uuid, kRoot, name, 0, 0, true});
  for (const auto& [ts, v] : samples) {
    model::TrackEventRecord c;
    c.ts = ts;
    c.track_uuid = uuid;
    c.type = model::TrackEventType::kCounter;
    c.counter_value = v;
    s.builder().OnTrackEvent(c);
  }
}

model::TrackArg Str(std::string name, std::string v) {
  model::TrackArg a;
  a.name = std::move(name);
  a.type = model::TrackArg::Type::kString;
  a.string_value = std::move(v);
  return a;
}
model::TrackArg Int(std::string name, int64_t v) {
  model::TrackArg a;
  a.name = std::move(name);
  a.int_value = v;
  return a;
}

void Instant(Synth& s, const char* name, std::vector<model::TrackArg> args) {
  model::TrackEventRecord e;
  e.ts = kBase;
  e.track_uuid = kMeta;
  e.type = model::TrackEventType::kInstant;
  e.name = name;
  e.args = std::move(args);
  s.builder().OnTrackEvent(e);
}

// The focus thread alone on CPU 1 in a cgroup with a 20 ms per 100 ms
// quota: it runs 20 ms, is switched out runnable, the CPU idles 80 ms, and
// it is back with no wakeup, ten times. `counted`: the recording's
// nr_throttled rose every 100 ms sample (else stayed at zero).
Synth Throttled(bool counted, bool member = true) {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Process(kOther, "other").Thread(kOther, kOther, "other");
  s.Switch(kBase, 1, 0, kFocus);
  for (int i = 0; i < 10; ++i) {
    uint64_t p = kBase + i * 100 * kMs;
    s.Switch(p + 20 * kMs, 1, kFocus, 0, 256);
    s.Switch(p + 100 * kMs, 1, 0, kFocus);
  }
  s.Switch(kBase + 1000 * kMs + 20 * kMs, 1, kFocus, 0, 1);
  s.RunSleep(0, kBase, kBase + 1000 * kMs, kOther, 1 * kMs, 9 * kMs, 20 * kUs);
  s.builder().OnTrack({kRoot, 0, "Node", 0, 0, false});
  s.builder().OnTrack({kMeta, 0, "gpunoise node", 0, 0, false});
  Instant(s, "cpu quota", {Str("path", "/job"), Int("version", 1), Int("quota_us", 20000), Int("period_us", 100000)});
  if (member) Instant(s, "quota process", {Str("cgroup", "/job"), Int("pid", kFocus)});
  std::vector<std::pair<uint64_t, double>> nr, ns, periods;
  for (int i = 1; i <= 11; ++i) {
    uint64_t ts = kBase + i * 100 * kMs;
    nr.push_back({ts, counted ? i : 0});
    ns.push_back({ts, counted ? i * 60.0 * kMs : 0});
    periods.push_back({ts, static_cast<double>(i)});
  }
  AddCounter(s, 910, "cgroup /job nr_throttled", nr);
  AddCounter(s, 911, "cgroup /job throttled ns", ns);
  AddCounter(s, 912, "cgroup /job nr_periods", periods);
  return s;
}

TEST(CpuThrottling, AQuotaIsNamedWithTheRunnableGapsOfItsPeriods) {
  Synth s = Throttled(true);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "cpu_throttling");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.culprit_kind, "cgroup");
  EXPECT_NE(f.culprit.find("/job (20 ms per 100 ms)"), std::string::npos) << f.culprit;
  EXPECT_EQ(f.focus_tids, std::vector<int32_t>{kFocus});
  EXPECT_EQ(f.cpus, std::vector<uint32_t>{1});
  EXPECT_EQ(f.cost_ns, 10 * 80 * kMs);
  EXPECT_EQ(f.Metric("waits"), 10);
  // The window ends with the last scheduler event (1020 ms): ten samples.
  EXPECT_EQ(f.Metric("nr_throttled"), 10);
  EXPECT_EQ(f.Metric("quota_cpus"), 0.2);
  EXPECT_NEAR(f.Metric("cpu_stat_throttled_ns"), 10 * 60.0 * kMs, 1);
  // An idle CPU kept the thread waiting: no task is to blame.
  EXPECT_TRUE(FindingsOf(a, "interference").empty());
  // The CPUS table carries the same time on the thread's CPU.
  for (const auto& c : a.cpus) EXPECT_EQ(c.throttled_ns, c.cpu == 1 ? f.cost_ns : 0) << "cpu " << c.cpu;
}

TEST(CpuThrottling, NoFindingWhenTheCounterDidNotRise) {
  Synth s = Throttled(false);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "cpu_throttling").empty());
}

TEST(CpuThrottling, AThreadOutsideTheQuotaCgroupIsNotThrottled) {
  Synth s = Throttled(true, /*member=*/false);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  EXPECT_TRUE(FindingsOf(a, "cpu_throttling").empty());
}

TEST(CpuThrottling, BelowTheThresholdNoFinding) {
  Synth s = Throttled(true);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t, {"trainer"}, {"throttling.min_delay=1s"});
  EXPECT_TRUE(FindingsOf(a, "cpu_throttling").empty());
}

}  // namespace
}  // namespace gpunoise::analyze
