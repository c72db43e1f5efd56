// NET_RX softirqs the recorder counted without timing (record
// --netrx-sample): written by the trace sink as a counter, read back by the
// importer, placed by analyze/untimed_softirqs.h, and seen by the storm
// detector at the storm's full size.
#include "analyze/untimed_softirqs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/synthetic.h"
#include "analyze/timeline_builder.h"
#include "export/perfetto/event_at.h"
#include "export/perfetto/trace_sink.h"
#include "import/test_trace.h"
#include "import/trace_reader.h"
#include "model/track_identity.h"

namespace gpunoise::analyze {
namespace {

using gpunoise::testing::kBase;
using gpunoise::testing::kMs;
using gpunoise::testing::kUs;

constexpr uint32_t kNetRx = 3, kTimer = 1;
constexpr int32_t kSender = 100;

model::Event At(uint64_t ts, uint32_t cpu, int32_t tid, model::Payload p) {
  return gpunoise::testing::EventAt(ts, std::move(p), cpu, tid);
}

model::Event SwitchTo(uint64_t ts, uint32_t cpu, int32_t next, const char* comm) {
  model::SchedSwitch s;
  s.prev_tid = 0;
  s.next_tid = next;
  s.next_comm = model::TaskComm(comm);
  return At(ts, cpu, 0, s);
}

// The sender sleeps: CPU 0 idles.
model::SchedSwitch SwitchOutOf(int32_t prev) {
  model::SchedSwitch s;
  s.prev_tid = prev;
  s.prev_state = 1;
  s.next_tid = 0;
  s.next_comm = model::TaskComm("swapper/0");
  return s;
}

// Writes `events` (CPU 0) and the kernel's end count through the recorder's
// trace sink, reads the file back the way the report does.
Timeline RoundTrip(const std::vector<model::Event>& events, uint64_t end_ts, uint64_t kernel_total) {
  gpunoise::testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/t.pftrace";
  auto sink = perfetto::TraceSink::Create(path);
  EXPECT_TRUE(sink.ok());
  if (!sink.ok()) return {};
  // In drain-sized batches, as the recorder writes them.
  for (size_t i = 0; i < events.size(); i += 4096) {
    std::vector<model::Event> batch(events.begin() + static_cast<std::ptrdiff_t>(i),
                                    events.begin() + static_cast<std::ptrdiff_t>(std::min(events.size(), i + 4096)));
    EXPECT_TRUE((*sink)->WriteCpuBatch(0, batch, false).ok());
  }
  const uint64_t totals[] = {kernel_total};
  EXPECT_TRUE((*sink)->WriteNetRxUntimedTotals(end_ts, totals).ok());
  EXPECT_TRUE((*sink)->Commit().ok());
  TimelineBuilder builder;
  import::TraceReader reader(builder);
  auto stats = reader.ReadFile(path);
  EXPECT_TRUE(stats.ok()) << (stats.ok() ? "" : stats.error().message);
  return builder.Finish();
}

// A storm as the recorder samples it: every 160 us a timed NET_RX softirq
// of 5 us that speaks for the 15 before it, for 400 ms, on CPU 0 while the
// sender runs there.
struct SampledStorm {
  std::vector<model::Event> events;
  uint64_t timed = 0, carried = 0, end = 0;
};

SampledStorm MakeSampledStorm() {
  SampledStorm s;
  s.events.push_back(SwitchTo(kBase, 0, kSender, "sender"));
  uint64_t t = kBase + kMs;
  for (; t < kBase + 401 * kMs; t += 160 * kUs) {
    const uint32_t untimed = s.timed == 0 ? 0 : 15;
    s.events.push_back(At(t, 0, kSender, model::SoftirqEntry{kNetRx, 0, untimed}));
    s.events.push_back(At(t + 5 * kUs, 0, kSender, model::SoftirqExit{kNetRx}));
    ++s.timed;
    s.carried += untimed;
  }
  s.end = t;
  s.events.push_back(At(s.end, 0, kSender, SwitchOutOf(kSender)));
  return s;
}

uint64_t NetRxBusy(const CpuTimeline& c) {
  uint64_t ns = 0;
  for (const IntrSlice& s : c.softirqs)
    if (s.id == static_cast<int32_t>(kNetRx)) ns += s.end - s.start;
  return ns;
}

TEST(UntimedSoftirqs, ARecordedStormsUntimedSoftirqsComeBackAsEstimatedSlicesBetweenTheTimedOnes) {
  SampledStorm storm = MakeSampledStorm();
  // Seven more ran after the last timed one: only the kernel's count has them.
  Timeline t = RoundTrip(storm.events, storm.end, storm.carried + 7);
  ASSERT_GE(t.cpus.size(), 1u);
  const CpuTimeline& c = t.cpus[0];
  EXPECT_EQ(c.UntimedTotal(), storm.carried + 7) << "the count is exact, the tail included";
  uint64_t placed = 0;
  for (const UntimedSpan& u : c.untimed) placed += u.placed;
  EXPECT_EQ(placed, storm.carried + 7) << "every gap had room for its share";
  EXPECT_EQ(c.softirqs.size(), storm.timed + placed);
  for (size_t i = 1; i < c.softirqs.size(); ++i)
    ASSERT_LE(c.softirqs[i - 1].end, c.softirqs[i].start) << "estimates never overlap: slice " << i;
  for (const IntrSlice& s : c.softirqs) {
    EXPECT_EQ(s.tid, kSender) << "an estimate interrupted the task that ran there";
    EXPECT_EQ(s.end - s.start, 5 * kUs) << "as long as the timed ones";
  }
  // 16 softirqs of 5 us every 160 us: half the CPU, where the timed ones
  // alone are 1/32 of it.
  const double share = static_cast<double>(NetRxBusy(c)) / static_cast<double>(400 * kMs);
  EXPECT_NEAR(share, 0.5, 0.01);
  // The counter is sampled at most once a millisecond, not at every timed
  // entry (2500 of them).
  for (const auto& [uuid, samples] : t.tracks.counters) {
    const model::TrackIdentity* id = t.tracks.Identity(uuid);
    if (id && id->node_metric == model::NodeMetric::kNetRxUntimed) {
      EXPECT_EQ(id->cpu, 0);
      EXPECT_LT(samples.size(), storm.timed / 5);
      EXPECT_GT(samples.size(), 300u);
      for (size_t i = 2; i + 1 < samples.size(); ++i)
        EXPECT_GE(samples[i].ts - samples[i - 1].ts, kMs) << "sample " << i;
      EXPECT_EQ(samples.back().value, static_cast<double>(storm.carried + 7));
    }
  }
}

TEST(UntimedSoftirqs, ASampledStormIsFoundAtItsFullSizeAndSaysItsTimeIsEstimated) {
  SampledStorm storm = MakeSampledStorm();
  Timeline t = RoundTrip(storm.events, storm.end, storm.carried);
  Analysis a = gpunoise::testing::AnalyzeOrDie(t);
  auto storms = gpunoise::testing::FindingsOf(a, "softirq_storm");
  ASSERT_EQ(storms.size(), 1u) << "half the CPU in NET_RX: a storm, though only 1 in 16 softirqs was timed";
  const Finding& f = storms[0];
  double share = 0, untimed = 0;
  for (const auto& [k, v] : f.metrics) {
    if (k == "share") share = v;
    if (k == "untimed_softirqs") untimed = v;
  }
  EXPECT_NEAR(share, 0.5, 0.03);
  EXPECT_NEAR(untimed, static_cast<double>(storm.carried), static_cast<double>(storm.carried) * 0.02);
  bool said = false;
  for (const auto& e : f.evidence) said |= e.find("ran untimed (the recorder timed a sample of a storm's)") != std::string::npos;
  EXPECT_TRUE(said) << "the finding says its time is partly estimated";
  EXPECT_EQ(a.loss.netrx_untimed, storm.carried);
  EXPECT_EQ(a.loss.total_lost, 0u) << "untimed is not lost";
}

TEST(UntimedSoftirqs, EstimatesStayOutOfOtherSoftirqsAndShrinkToFitTheirGap) {
  std::vector<model::Event> ev = {SwitchTo(kBase, 0, kSender, "sender")};
  const uint64_t t0 = kBase + kMs;
  ev.push_back(At(t0, 0, kSender, model::SoftirqEntry{kNetRx}));
  ev.push_back(At(t0 + 5 * kUs, 0, kSender, model::SoftirqExit{kNetRx}));
  ev.push_back(At(t0 + 10 * kUs, 0, kSender, model::SoftirqEntry{kTimer}));
  ev.push_back(At(t0 + 20 * kUs, 0, kSender, model::SoftirqExit{kTimer}));
  // Ten untimed before this one, and only the 10 us after the timer's
  // softirq free for them: each shrinks to 1 us.
  ev.push_back(At(t0 + 30 * kUs, 0, kSender, model::SoftirqEntry{kNetRx, 0, 10}));
  ev.push_back(At(t0 + 35 * kUs, 0, kSender, model::SoftirqExit{kNetRx}));
  ev.push_back(At(t0 + 2 * kMs, 0, kSender, SwitchOutOf(kSender)));
  Timeline t = RoundTrip(ev, t0 + 2 * kMs, 10);
  const CpuTimeline& c = t.cpus[0];
  ASSERT_EQ(c.softirqs.size(), 13u);
  size_t estimates = 0;
  for (const IntrSlice& s : c.softirqs) {
    if (s.start < t0 + 20 * kUs || s.start >= t0 + 30 * kUs) continue;
    ++estimates;
    EXPECT_EQ(s.id, static_cast<int32_t>(kNetRx));
    EXPECT_GE(s.start, t0 + 20 * kUs);
    EXPECT_LE(s.end, t0 + 30 * kUs);
    EXPECT_EQ(s.end - s.start, kUs);
  }
  EXPECT_EQ(estimates, 10u);
}

TEST(UntimedSoftirqs, WithoutTheCounterTheTimelineIsAsRecorded) {
  std::vector<model::Event> ev = {SwitchTo(kBase, 0, kSender, "sender"),
                                  At(kBase + kMs, 0, kSender, model::SoftirqEntry{kNetRx}),
                                  At(kBase + kMs + 5 * kUs, 0, kSender, model::SoftirqExit{kNetRx})};
  Timeline t = RoundTrip(ev, kBase + 2 * kMs, 0);
  EXPECT_EQ(t.cpus[0].softirqs.size(), 1u);
  EXPECT_TRUE(t.cpus[0].untimed.empty());
}

}  // namespace
}  // namespace gpunoise::analyze
