// A synthetic recording replayed through the monitor's interval detectors
// (interval_replay.h) gives the report's findings when the interval is the
// threshold's window, and shows the dilution of a short storm when it is
// longer (docs/report.md, "Window semantics").
#include "analyze/interval_replay.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "analyze/analysis.h"
#include "analyze/analysis_context.h"
#include "analyze/interval_detectors.h"
#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100;
constexpr uint32_t kNetRx = 3;
using Key = std::tuple<std::string, std::string, std::string>;  // detector, kind, culprit

// 500 ms of NET_RX at half of CPU 1, where the focus thread runs, polled
// from eth0 queue 3 with full budgets and raised by its IRQ 45.
Timeline Storm(uint64_t storm_ms) {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.IrqName(45, "eth0-TxRx-3");
  s.Switch(kBase, 1, 0, kFocus);
  for (uint64_t t = kBase + 200 * kMs; t < kBase + (200 + storm_ms) * kMs; t += kMs) {
    s.Irq(1, t, t + 5 * kUs, 45);
    s.Softirq(1, t + 5 * kUs, t + 505 * kUs, kNetRx);
    s.Net(t + 10 * kUs, 1, model::NetTraceKind::kNapiPoll, "eth0", 64, 64, 3);
  }
  s.PeriodicSoftirq(0, kBase, kBase + 1000 * kMs, kNetRx, 10 * kMs, 100 * kUs);
  s.Switch(kBase + 1000 * kMs, 1, kFocus, 0, 1);
  s.Switch(kBase + 1000 * kMs, 0, 0, 0);
  return s.Build();
}

// The detectors the monitor runs; task culprits compared by tid (the
// report's name of a task also carries its process's name and container).
std::set<Key> Keys(const std::vector<Finding>& findings) {
  std::set<Key> out;
  for (const Finding& f : findings) {
    if (f.detector != "softirq_storm" && f.detector != "interference" && f.detector != "nic_trouble") continue;
    out.insert({f.detector, f.kind, f.culprit_kind == "task" ? "task " + std::to_string(f.culprit_tid) : f.culprit});
  }
  return out;
}

// The focus thread, preempted on CPU 1, waits 300 ms behind a hog (tid
// 200) whose run holds 20 ms of NET_RX.
constexpr int32_t kHog = 200;
Timeline WaitBehindAHog() {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.Process(kHog, "hog").Thread(kHog, kHog, "hog");
  s.Switch(kBase, 1, 0, kFocus);
  s.Switch(kBase + 100 * kMs, 1, kFocus, kHog, 0);
  s.Softirq(1, kBase + 150 * kMs, kBase + 170 * kMs, kNetRx);
  s.Switch(kBase + 400 * kMs, 1, kHog, kFocus, 0);
  s.Switch(kBase + 1000 * kMs, 1, kFocus, 0, 1);
  s.Switch(kBase + 1000 * kMs, 0, 0, 0);
  return s.Build();
}

struct Replayed {
  Thresholds thresholds;
  AnalysisContext ctx;
  std::vector<Finding> findings;
};

std::unique_ptr<Replayed> ReplayThroughTheMonitor(const Timeline& t, uint64_t interval_ns) {
  auto r = std::make_unique<Replayed>();
  AnalysisOptions options;
  options.focus = {"trainer"};
  auto focus = BuildAnalysisContext(t, options, &r->thresholds, t.start_ts, t.end_ts + 1, &r->ctx);
  EXPECT_TRUE(focus.ok());
  Replay replay = ReplayAsIntervals(r->ctx, interval_ns);
  for (const ReplayedInterval& in : replay.intervals) {
    IntervalContext c;
    c.delta = &in.delta;
    c.start = in.start;
    c.end = in.end;
    c.irqs = &replay.irqs;
    c.names = &replay.names;
    c.thresholds = &r->thresholds;
    for (Finding& f : DetectIntervalFindings(c)) r->findings.push_back(std::move(f));
  }
  return r;
}

std::string Describe(const std::set<Key>& keys) {
  std::string out;
  for (const auto& [d, k, c] : keys) out += d + "/" + k + "/" + c + "\n";
  return out;
}

TEST(IntervalReplay, AtTheThresholdsWindowTheMonitorFindsWhatTheReportFinds) {
  Timeline t = Storm(500);
  Analysis report = AnalyzeOrDie(t, {"trainer"});
  auto monitor = ReplayThroughTheMonitor(t, Thresholds().GetNs("softirq.window"));
  const std::set<Key> want = Keys(report.findings);
  EXPECT_TRUE(want.count({"softirq_storm", "softirq_share", "softirq NET_RX from eth0 queue 3"})) << Describe(want);
  EXPECT_TRUE(want.count({"nic_trouble", "napi_full_budget", "eth0"})) << Describe(want);
  EXPECT_TRUE(want.count({"interference", "interrupted", "softirq NET_RX"})) << Describe(want);
  EXPECT_EQ(Keys(monitor->findings), want) << "report:\n" << Describe(want) << "monitor:\n" << Describe(Keys(monitor->findings));
  // The storm's intervals, and only those, fire.
  for (const Finding& f : monitor->findings)
    if (f.detector == "softirq_storm") {
      EXPECT_GE(f.start, kBase + 200 * kMs);
      EXPECT_LE(f.end, kBase + 700 * kMs);
      EXPECT_EQ(f.culprit_irq, 45);
      EXPECT_NEAR(f.Metric("share"), 0.5, 0.01);
    }
}

TEST(IntervalReplay, TheTaskAFocusThreadWaitedBehindIsTheMonitorsCulpritAtTheReportsCost) {
  Timeline t = WaitBehindAHog();
  Analysis report = AnalyzeOrDie(t, {"trainer"});
  auto monitor = ReplayThroughTheMonitor(t, t.end_ts + 1 - t.start_ts);
  const std::set<Key> want = Keys(report.findings);
  ASSERT_TRUE(want.count({"interference", "run_queue_delay", "task 200"})) << Describe(want);
  EXPECT_EQ(Keys(monitor->findings), want) << "report:\n" << Describe(want) << "monitor:\n" << Describe(Keys(monitor->findings));
  auto cost = [](const std::vector<Finding>& findings) {
    for (const Finding& f : findings)
      if (f.culprit_tid == kHog) return f.cost_ns;
    return uint64_t{0};
  };
  // The softirq inside the hog's run is not the hog's.
  EXPECT_EQ(cost(report.findings), 280 * kMs);
  EXPECT_EQ(cost(monitor->findings), 280 * kMs);
}

TEST(IntervalReplay, AKernelTroubleCounterThatRoseIsTheMonitorsKernelHealthFindingToo) {
  Timeline t = WaitBehindAHog();
  // /sys/kernel/warn_count as the recorder samples it: 7 since boot, 9
  // after a WARN and another in the second half.
  constexpr uint64_t kTrack = 0x9000;
  model::TrackIdentity id;
  id.kind = model::TrackKind::kKernelHealthCounter;
  id.detail = "warn_count";
  t.tracks.identities[kTrack] = id;
  t.tracks.counters[kTrack] = {{kBase, 7}, {kBase + 300 * kMs, 8}, {kBase + 700 * kMs, 9}};
  Analysis report = AnalyzeOrDie(t, {"trainer"});
  ASSERT_TRUE(Keys(report.findings).count({"nic_trouble", "kernel_health", "kernel"}));
  for (uint64_t interval : {100 * kMs, t.end_ts + 1 - t.start_ts}) {
    auto monitor = ReplayThroughTheMonitor(t, interval);
    double counted = 0;
    for (const Finding& f : monitor->findings)
      if (f.kind == "kernel_health") {
        EXPECT_EQ(f.culprit, "kernel");
        counted += f.Metric("increase");
      }
    EXPECT_EQ(counted, 2) << interval;
  }
}

TEST(IntervalReplay, AStormShorterThanTheIntervalIsDilutedAndTheMonitorSaysSo) {
  // 200 ms at 50% of CPU 1: 100 ms windows see 50%, a 1 s interval 10%.
  Timeline t = Storm(200);
  Analysis report = AnalyzeOrDie(t, {"trainer"});
  EXPECT_EQ(FindingsOf(report, "softirq_storm").size(), 1u);
  auto monitor = ReplayThroughTheMonitor(t, 1'000'000'000);
  for (const Finding& f : monitor->findings) EXPECT_NE(f.detector, "softirq_storm") << f.title;
  const std::string note = IntervalWindowNote(Thresholds(), 1'000'000'000);
  EXPECT_NE(note.find("100 ms storm at 100% shows as 10%"), std::string::npos) << note;
  EXPECT_TRUE(IntervalWindowNote(Thresholds(), 100'000'000).empty());
  // At the threshold's window the monitor sees it.
  auto fine = ReplayThroughTheMonitor(t, 100'000'000);
  size_t storms = 0;
  for (const Finding& f : fine->findings) storms += f.detector == "softirq_storm";
  EXPECT_GE(storms, 1u);
}

TEST(IntervalReplay, IntervalsCoverTheWindowAndSumTheSlices) {
  Timeline t = Storm(500);
  Thresholds th;
  AnalysisContext ctx;
  AnalysisOptions options;
  options.focus = {"trainer"};
  ASSERT_TRUE(BuildAnalysisContext(t, options, &th, t.start_ts, t.end_ts + 1, &ctx).ok());
  Replay r = ReplayAsIntervals(ctx, 250 * kMs);
  ASSERT_FALSE(r.intervals.empty());
  EXPECT_EQ(r.intervals.front().start, ctx.from);
  EXPECT_EQ(r.intervals.back().end, ctx.to);
  uint64_t net_rx_cpu1 = 0, polls = 0, irqs = 0, oncpu = 0;
  for (const auto& in : r.intervals) {
    for (const auto& c : in.delta.softirqs)
      if (c.cpu == 1) net_rx_cpu1 += c.ns[kNetRx];
    for (const auto& n : in.delta.net.napi) polls += n.polls;
    for (const auto& h : in.delta.hardirqs) irqs += h.count;
    for (const auto& f : in.delta.focus) oncpu += f.oncpu_ns;
  }
  EXPECT_EQ(net_rx_cpu1, 500 * 500 * kUs);
  EXPECT_EQ(polls, 500u);
  EXPECT_EQ(irqs, 500u);
  EXPECT_EQ(oncpu, 1000 * kMs);
  EXPECT_EQ(r.irqs.at(45).device, "eth0");
}

}  // namespace
}  // namespace gpunoise::analyze
