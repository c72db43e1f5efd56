#include "analyze/cpu_state_detectors.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100;
constexpr uint64_t kNodeRoot = 900, kMeta = 950;

model::TrackArg Int(std::string name, int64_t v) {
  model::TrackArg a;
  a.name = std::move(name);
  a.type = model::TrackArg::Type::kInt;
  a.int_value = v;
  return a;
}
model::TrackArg Str(std::string name, std::string v) {
  model::TrackArg a;
  a.name = std::move(name);
  a.type = model::TrackArg::Type::kString;
  a.string_value = std::move(v);
  return a;
}

void Meta(Synth& s, uint64_t ts, std::string_view name, std::vector<model::TrackArg> args) {
  model::TrackEventRecord e;
  e.ts = ts;
  e.track_uuid = kMeta;
  e.type = model::TrackEventType::kInstant;
  e.name = name;
  e.args = std::move(args);
  s.builder().OnTrackEvent(e);
}

void Counter(Synth& s, uint64_t uuid, uint64_t ts, double v) {
  model::TrackEventRecord c;
  c.ts = ts;
  c.track_uuid = uuid;
  c.type = model::TrackEventType::kCounter;
  c.counter_value = v;
  s.builder().OnTrackEvent(c);
}

// The recorder's "cpustate" instant: everything measurable.
Synth& Node(Synth& s) {
  s.builder().OnTrack({kNodeRoot, 0, "Node", 0, 0, false});
  s.builder().OnTrack({kMeta, 0, "gpunoise node", 0, 0, false});
  Meta(s, kBase, "cpustate",
       {Int("cpu_idle", 1), Int("cpu_frequency", 1), Int("cpufreq_sysfs", 1), Int("numa_tracepoints", 1),
        Int("mm_migrate_pages", 1), Int("numa_nodes", 2), Int("numa_balancing", 1), Int("smi", 1),
        Str("smi_unavailable", "")});
  Meta(s, kBase, "cpu idle state", {Int("cpu", 1), Int("state", 2), Str("name", "C6"), Int("exit_latency_us", 85)});
  return s;
}

// The focus thread on CPU 1, 200 times: runs 200 us, sleeps (CPU 1 idles
// in `state` from 5 us later), is woken at 900 us and switched in at
// 1000 us; the idle period ends `exit` after the wakeup.
Timeline Wakeups(int32_t state, uint64_t exit) {
  Synth s;
  Node(s);
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.builder().OnTrack({901, kNodeRoot, "cpu1 idle state", 0, 0, true});
  for (int i = 0; i < 200; ++i) {
    uint64_t t0 = kBase + i * kMs;
    s.Switch(t0, 1, 0, kFocus);
    s.Switch(t0 + 200 * kUs, 1, kFocus, 0, 1);
    s.Wake(t0 + 900 * kUs, 0, kFocus, 1);
    Counter(s, 901, t0 + 205 * kUs, state);
    Counter(s, 901, t0 + 900 * kUs + exit, -1);
  }
  s.Switch(kBase + 200 * kMs, 1, 0, kFocus);
  s.Switch(kBase + 201 * kMs, 1, kFocus, 0, 1);
  return s.Build();
}

TEST(IdleExit, WakeupsWaitingMostlyForADeepIdleExitAreNamedWithTheExitTime) {
  Timeline t = Wakeups(2, 80 * kUs);
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "idle_exit");
  ASSERT_EQ(found.size(), 1u);
  // 200 wakeups (the last at 199.9 ms, switched in at 200 ms) x 80 us.
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 200 * 80.0 * kUs, 2 * kUs);
  EXPECT_EQ(found[0].Metric("wakeups"), 200);
  EXPECT_EQ(found[0].cpus, std::vector<uint32_t>{1});
  EXPECT_EQ(found[0].culprit_kind, "hardware");
  EXPECT_NE(found[0].culprit.find("C6"), std::string::npos) << found[0].culprit;
}

TEST(IdleExit, AnExitBelowHalfTheLatencyIsANearMissAndNoFinding) {
  Timeline t = Wakeups(2, 40 * kUs);  // 40 of 100 us
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(t, {"trainer"}), "idle_exit").empty());
}

TEST(IdleExit, PollingIdleIsNotADeepState) {
  Timeline t = Wakeups(0, 80 * kUs);
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(t, {"trainer"}), "idle_exit").empty());
}

TEST(IdleExit, FewWakeupsStayUnderTheThreshold) {
  Timeline t = Wakeups(2, 80 * kUs);
  // 16 ms of exits: under a 20 ms minimum.
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(t, {"trainer"}, {"idle_exit.min_delay=20ms"}), "idle_exit").empty());
}

// The focus thread runs on CPU 0 for 1 s; CPU 0 runs at `khz` (of 2 GHz)
// from 200 ms to 700 ms, else at 2 GHz.
Timeline Frequency(double khz, bool limits = true) {
  Synth s;
  Node(s);
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Switch(kBase, 0, 0, kFocus).Switch(kBase + 1000 * kMs, 0, kFocus, 0, 1);
  if (limits) Meta(s, kBase, "cpu frequency limits", {Int("cpu", 0), Int("min_khz", 800000), Int("max_khz", 2000000)});
  s.builder().OnTrack({902, kNodeRoot, "cpu0 frequency", 0, 0, true});
  Counter(s, 902, kBase, 2000000);
  Counter(s, 902, kBase + 200 * kMs, khz);
  Counter(s, 902, kBase + 700 * kMs, 2000000);
  return s.Build();
}

TEST(CpuFrequency, RunningAtReducedFrequencyCostsTheShortfall) {
  Timeline t = Frequency(1000000);
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "cpu_frequency");
  ASSERT_EQ(found.size(), 1u);
  // 500 ms at half the frequency: 250 ms of work lost.
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 250.0 * kMs, 1.0 * kMs);
  EXPECT_NEAR(found[0].Metric("reduced_ns"), 500.0 * kMs, 1.0 * kMs);
  EXPECT_EQ(found[0].cpus, std::vector<uint32_t>{0});
}

TEST(CpuFrequency, ADropToEightyFivePercentIsANearMissAndNoFinding) {
  Timeline t = Frequency(1700000);
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(t, {"trainer"}), "cpu_frequency").empty());
}

TEST(CpuFrequency, WithoutSysfsLimitsTheHighestSeenIsTheReference) {
  Timeline t = Frequency(1000000, false);
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "cpu_frequency");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 250.0 * kMs, 1.0 * kMs);
}

Timeline Numa(int32_t moved_tid, int32_t migrate_reason, uint64_t pages) {
  Synth s;
  Node(s);
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Process(300, "other").Thread(300, 300, "other");
  s.Switch(kBase, 0, 0, kFocus).Switch(kBase + 1000 * kMs, 0, kFocus, 0, 1);
  Meta(s, kBase + 100 * kMs, "numa move",
       {Int("tid", moved_tid), Int("cpu", 0), Int("src_cpu", 0), Int("dst_cpu", 8), Int("src_nid", 0), Int("dst_nid", 1)});
  Meta(s, kBase + 200 * kMs, "numa migrate pages",
       {Int("tid", kFocus), Int("cpu", 0), Int("succeeded", static_cast<int64_t>(pages)), Int("failed", 0),
        Int("reason", migrate_reason)});
  return s.Build();
}

TEST(NumaBalancing, AFocusThreadMovedToAnotherNodeIsNamed) {
  Timeline t = Numa(kFocus, 5, 512);
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "numa_balancing");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].Metric("moves"), 1);
  EXPECT_EQ(found[0].Metric("pages_migrated"), 512);
  EXPECT_EQ(found[0].cpus, (std::vector<uint32_t>{0, 8}));
  EXPECT_EQ(found[0].cost_ns, 0u);
}

TEST(NumaBalancing, AnotherThreadsMoveAndCompactionMigrationsAreNoFinding) {
  // Near miss: the move is another thread's, and the focus thread's pages
  // moved for compaction (reason 0), not NUMA balancing.
  Timeline t = Numa(300, 0, 4096);
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(t, {"trainer"}), "numa_balancing").empty());
}

Timeline Smis(uint64_t start, uint64_t end) {
  Synth s;
  Node(s);
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Switch(kBase, 0, 0, kFocus).Switch(kBase + 1000 * kMs, 0, kFocus, 0, 1);
  for (int cpu = 0; cpu < 2; ++cpu)
    Meta(s, kBase + 1000 * kMs, "smi count",
         {Int("cpu", cpu), Int("start", static_cast<int64_t>(start)), Int("end", static_cast<int64_t>(end))});
  return s.Build();
}

TEST(Smi, SmisDuringTheRecordingAreNamed) {
  auto found = FindingsOf(AnalyzeOrDie(Smis(4294967290u, 3), {"trainer"}), "smi");  // wrapped: 9 SMIs
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].Metric("smis"), 9);
  EXPECT_EQ(found[0].cpus, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(found[0].culprit_kind, "firmware");
}

TEST(Smi, AnUnchangedCounterIsNoFinding) {
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(Smis(120, 120), {"trainer"}), "smi").empty());
}

TEST(CpuStateNotMeasurable, WhatTheNodeLacksIsNamedWithItsReason) {
  Synth s;
  s.builder().OnTrack({kMeta, 0, "gpunoise node", 0, 0, false});
  Meta(s, kBase, "cpustate",
       {Int("cpu_idle", 1), Int("cpu_frequency", 1), Int("cpufreq_sysfs", 0), Int("numa_tracepoints", 1),
        Int("mm_migrate_pages", 1), Int("numa_nodes", 1), Int("numa_balancing", 0), Int("smi", 0),
        Str("smi_unavailable", "/dev/cpu/0/msr does not exist")});
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Switch(kBase, 0, 0, kFocus).Switch(kBase + 10 * kMs, 0, kFocus, 0, 1);
  Analysis a = AnalyzeOrDie(s.Build(), {"trainer"});
  std::map<std::string, std::string> got;
  for (const auto& n : a.not_measurable) got[n.kind] = n.reason;
  EXPECT_EQ(got.count("idle_exit"), 0u);
  EXPECT_NE(got["cpu_frequency"].find("no cpufreq driver"), std::string::npos);
  EXPECT_NE(got["numa_balancing"].find("1 NUMA node"), std::string::npos);
  EXPECT_EQ(got["smi"], "/dev/cpu/0/msr does not exist");
}

TEST(CpuStateNotMeasurable, ATraceWithoutTheCpustateGroupSaysNothing) {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Switch(kBase, 0, 0, kFocus).Switch(kBase + 10 * kMs, 0, kFocus, 0, 1);
  // numa_locality says the trace has no topology; the cpustate kinds say
  // nothing without their collector.
  for (const NotMeasurable& n : AnalyzeOrDie(s.Build(), {"trainer"}).not_measurable)
    EXPECT_EQ(n.kind, "numa_locality") << n.reason;
}

}  // namespace
}  // namespace gpunoise::analyze
