#include "analyze/kernel_work_detector.h"

#include <gtest/gtest.h>

#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100;     // trainer's main thread
constexpr int32_t kUnmapper = 101;  // another thread of the trainer
constexpr int32_t kOther = 300;     // another process
constexpr int32_t kKworker = 50;

model::TrackArg Str(const char* name, std::string value) {
  model::TrackArg a;
  a.name = name;
  a.type = model::TrackArg::Type::kString;
  a.string_value = std::move(value);
  return a;
}
model::TrackArg Int(const char* name, int64_t value) {
  model::TrackArg a;
  a.name = name;
  a.int_value = value;
  return a;
}
model::TrackArg Uint(const char* name, uint64_t value) {
  model::TrackArg a;
  a.name = name;
  a.type = model::TrackArg::Type::kUint;
  a.uint_value = value;
  return a;
}

// What the recorder writes (export/perfetto/node_kwork_tracks.cc): a send
// as an instant, the rest as slices, the facts as args.
void Send(Synth& s, uint64_t ts, int32_t sender, uint32_t cpu, uint64_t targets, const char* function,
          uint64_t csd = 0) {
  model::TrackEventRecord e;
  e.ts = ts;
  e.track_uuid = 900;
  e.type = model::TrackEventType::kInstant;
  e.name = "ipi send";
  e.category = "gpunoise.kwork";
  e.args = {Str("kind", "ipi send"), Int("cpu", cpu), Int("tid", sender), Str("function", function),
            Str("callsite", "on_each_cpu_cond_mask+0x24"), Uint("targets", targets)};
  if (csd) e.args.push_back(Uint("csd", csd));
  s.builder().OnTrackEvent(e);
}

void Span(Synth& s, const char* kind, uint64_t begin, uint64_t end, uint32_t cpu, int32_t tid, const char* function,
          uint64_t csd = 0) {
  model::TrackEventRecord b;
  b.ts = begin;
  b.track_uuid = 910 + cpu;
  b.type = model::TrackEventType::kSliceBegin;
  b.name = function;
  b.category = "gpunoise.kwork";
  b.args = {Str("kind", kind), Int("cpu", cpu), Int("tid", tid), Str("function", function)};
  if (csd) b.args.push_back(Uint("csd", csd));
  s.builder().OnTrackEvent(b);
  model::TrackEventRecord e;
  e.ts = end;
  e.track_uuid = b.track_uuid;
  e.type = model::TrackEventType::kSliceEnd;
  s.builder().OnTrackEvent(e);
}

Synth Base() {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer").Thread(kUnmapper, kFocus, "loader");
  s.Process(kOther, "other").Thread(kOther, kOther, "other");
  s.Process(kKworker, "kworker/0:1", true).Thread(kKworker, kKworker, "kworker/0:1");
  for (uint64_t uuid : {900, 910, 911}) s.builder().OnTrack({uuid, 0, "kwork", 0, 0, false});
  return s;
}

// The trainer runs on CPU 0 for 1 s; its loader thread on CPU 1 sends `n`
// TLB flushes to CPU 0 (4 us callbacks each); `other` sends call-function
// IPIs to CPU 1 only.
Timeline Shootdowns(int n) {
  Synth s = Base();
  s.Switch(kBase, 0, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 0, kFocus, 0, 1);
  for (int i = 0; i < n; ++i) {
    uint64_t t0 = kBase + 10 * kMs + i * 1 * kMs;
    Send(s, t0, kUnmapper, 1, 0b11, "flush_tlb_func");
    Send(s, t0 + 2 * kUs, kOther, 1, 0b10, "do_sync_core");
    Span(s, "ipi callback", t0 + 5 * kUs, t0 + 9 * kUs, 0, kFocus, "flush_tlb_func");
  }
  return s.Build();
}

TEST(IpiTlb, ShootdownsOnTheFocusCpuAreAttributedToTheSendingThread) {
  Timeline t = Shootdowns(500);
  Analysis a = AnalyzeOrDie(t, {"trainer"});
  auto found = FindingsOf(a, "ipi_tlb");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.kind, "tlb_shootdown");
  EXPECT_EQ(f.culprit_tid, kUnmapper);
  EXPECT_EQ(f.culprit_kind, "task");
  EXPECT_EQ(f.Metric("ipis"), 500);
  EXPECT_EQ(f.cost_ns, 500 * 4 * kUs);
  EXPECT_EQ(f.Metric("own_process"), 1);
  EXPECT_EQ(f.cpus, std::vector<uint32_t>{0});
  EXPECT_EQ(f.focus_tids, std::vector<int32_t>{kFocus});
}

TEST(IpiTlb, AFewShootdownsAreNoFinding) {
  Timeline t = Shootdowns(50);  // under ipi.min_count
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(t, {"trainer"}), "ipi_tlb").empty());
}

TEST(IpiTlb, ASendAimedAtAnotherCpuIsNotTheSender) {
  Synth s = Base();
  s.Switch(kBase, 0, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 0, kFocus, 0, 1);
  for (int i = 0; i < 300; ++i) {
    uint64_t t0 = kBase + 10 * kMs + i * 1 * kMs;
    Send(s, t0, kOther, 1, 0b10, "do_sync_core");  // CPU 1 only
    Span(s, "ipi callback", t0 + 5 * kUs, t0 + 9 * kUs, 0, kFocus, "do_sync_core");
  }
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "ipi_tlb");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, "function_call");
  EXPECT_EQ(found[0].culprit_tid, 0);
  EXPECT_EQ(found[0].culprit, "unknown sender");
}

TEST(IpiTlb, CallbacksThatInterruptedNoFocusThreadAreNotCounted) {
  Synth s = Base();
  s.Switch(kBase, 0, 0, kOther);
  s.Switch(kBase + 1000 * kMs, 0, kOther, 0, 1);
  s.Switch(kBase, 1, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 1, kFocus, 0, 1);
  for (int i = 0; i < 500; ++i) {
    uint64_t t0 = kBase + 10 * kMs + i * 1 * kMs;
    Send(s, t0, kUnmapper, 1, 0b01, "flush_tlb_func");
    Span(s, "ipi callback", t0 + 5 * kUs, t0 + 9 * kUs, 0, kOther, "flush_tlb_func");
  }
  Timeline t = s.Build();
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(t, {"trainer"}), "ipi_tlb").empty());
}

TEST(IpiTlb, TheCsdPairsACallbackWithTheRequestItServes) {
  Synth s = Base();
  s.Switch(kBase, 0, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 0, kFocus, 0, 1);
  for (int i = 0; i < 300; ++i) {
    uint64_t t0 = kBase + 10 * kMs + i * 1 * kMs;
    // Both queue the same function for CPU 0; the callback serves other's
    // request (its csd) although the loader's came later.
    Send(s, t0, kOther, 1, 0b01, "flush_tlb_func", 0xa000);
    Send(s, t0 + 1 * kUs, kUnmapper, 1, 0b01, "flush_tlb_func", 0xb000);
    Span(s, "ipi callback", t0 + 5 * kUs, t0 + 9 * kUs, 0, kFocus, "flush_tlb_func", 0xa000);
  }
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "ipi_tlb");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].culprit_tid, kOther);
  EXPECT_EQ(found[0].Metric("own_process"), 0);
}

TEST(Timer, ACallbackCostsItsShareOfTheInterruptAroundIt) {
  Synth s = Base();
  s.Switch(kBase, 0, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 0, kFocus, 0, 1);
  // 1000 local-timer interrupts of 20 us, each running two callbacks of 2
  // and 6 us: the interrupt's 20 us split 5 / 15 between them.
  for (int i = 0; i < 1000; ++i) {
    uint64_t t0 = kBase + 10 * kMs + i * 900 * kUs;
    s.Irq(0, t0, t0 + 20 * kUs, 11);
    Span(s, "hrtimer", t0 + 4 * kUs, t0 + 6 * kUs, 0, kFocus, "tick_nohz_handler");
    Span(s, "hrtimer", t0 + 8 * kUs, t0 + 14 * kUs, 0, kFocus, "timerfd_tmrproc");
  }
  Timeline t = s.Build();
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "timer");
  ASSERT_EQ(found.size(), 1u);  // the tick's 5 ms is 0.5%: under timer.min_share
  EXPECT_EQ(found[0].culprit, "timerfd_tmrproc");
  EXPECT_EQ(found[0].cost_ns, 1000 * 15 * kUs);
}

// The trainer runs alone on CPU 0 for 1 s; every `period` an hrtimer
// callback `function` of `len` interrupts it.
Timeline Timers(uint64_t period, uint64_t len, const char* function) {
  Synth s = Base();
  s.Switch(kBase, 0, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 0, kFocus, 0, 1);
  for (uint64_t t0 = kBase + period; t0 + len < kBase + 1000 * kMs; t0 += period)
    Span(s, "hrtimer", t0, t0 + len, 0, kFocus, function);
  return s.Build();
}

TEST(Timer, AnHrtimerStormOnTheFocusCpuIsNamedByItsFunction) {
  Timeline t = Timers(500 * kUs, 10 * kUs, "timerfd_tmrproc");  // 2000 x 10 us: 2%
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "timer");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].culprit, "timerfd_tmrproc");
  EXPECT_EQ(found[0].kind, "hrtimer");
  EXPECT_NEAR(found[0].Metric("callbacks"), 1999, 1);
  EXPECT_NEAR(found[0].cost_share, 0.02, 0.001);
}

TEST(Timer, TheSchedulerTickIsNoFinding) {
  Timeline t = Timers(4 * kMs, 6 * kUs, "tick_nohz_handler");  // 250 Hz x 6 us: 0.15%
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(t, {"trainer"}), "timer").empty());
}

// A kworker preempts the trainer on CPU 0 for 1 ms every 10 ms, running
// work items of `function` for the whole of it.
Timeline Work(uint32_t work_cpu) {
  Synth s = Base();
  s.Alternate(0, kBase, kBase + 1000 * kMs, kFocus, 9 * kMs, kKworker, 1 * kMs);
  for (uint64_t t0 = kBase + 9 * kMs; t0 + kMs <= kBase + 1000 * kMs; t0 += 10 * kMs)
    Span(s, "work item", t0, t0 + kMs, work_cpu, kKworker, "vmstat_update");
  return s.Build();
}

TEST(Workqueue, WorkItemsRunWhileTheFocusThreadWaitsAreNamedByFunction) {
  Timeline t = Work(0);
  auto found = FindingsOf(AnalyzeOrDie(t, {"trainer"}), "workqueue");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].culprit, "vmstat_update");
  EXPECT_EQ(found[0].cpus, std::vector<uint32_t>{0});
  EXPECT_NEAR(static_cast<double>(found[0].cost_ns), 100.0 * kMs, 2.0 * kMs);
  EXPECT_EQ(found[0].focus_tids, std::vector<int32_t>{kFocus});
}

TEST(Workqueue, WorkItemsOnACpuWhereNoFocusThreadWaitedAreNoFinding) {
  Timeline t = Work(1);  // same items, recorded on CPU 1
  EXPECT_TRUE(FindingsOf(AnalyzeOrDie(t, {"trainer"}), "workqueue").empty());
}

}  // namespace
}  // namespace gpunoise::analyze
