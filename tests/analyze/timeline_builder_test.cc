#include "analyze/timeline_builder.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "analyze/attribution.h"
#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

TEST(TimelineBuilder, SwitchesBecomeRunSlicesWithTheStateThatEndedThem) {
  Synth s;
  s.Switch(100, 0, -1, 7).Switch(200, 0, 7, 8, 256).Switch(350, 0, 8, 0, 1);
  Timeline t = s.Build();
  ASSERT_EQ(t.cpus.size(), 1u);
  const auto& runs = t.cpus[0].runs;
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].tid, 7);
  EXPECT_EQ(runs[0].start, 100u);
  EXPECT_EQ(runs[0].end, 200u);
  EXPECT_TRUE(IsPreemptedState(runs[0].end_state));
  EXPECT_EQ(runs[1].tid, 8);
  EXPECT_EQ(StateName(runs[1].end_state), "S");
  EXPECT_EQ(runs[2].tid, 0);
  EXPECT_EQ(runs[2].end_state, kStateStillRunning) << "idle until the data ends";
  EXPECT_EQ(t.start_ts, 100u);
  EXPECT_EQ(t.end_ts, 350u);
}

TEST(TimelineBuilder, ABrokenChainEndsTheSliceWithAnUnknownState) {
  Synth s;
  s.Switch(100, 0, 0, 7).Switch(200, 0, 9, 8, 1);  // 7 -> 9 never arrived
  Timeline t = s.Build();
  EXPECT_EQ(t.cpus[0].chain_breaks, 1u);
  EXPECT_EQ(t.cpus[0].runs[0].end_state, kStateUnknown);
}

TEST(TimelineBuilder, LossClosesWhatRanAndStartsOverUnknown) {
  Synth s;
  s.Switch(100, 0, 0, 7).Irq(0, 150, 160, 3).Loss(0, 180, 300).Switch(400, 0, 5, 8);
  Timeline t = s.Build();
  const auto& c = t.cpus[0];
  ASSERT_EQ(c.losses.size(), 1u);
  ASSERT_EQ(c.runs.size(), 2u);
  EXPECT_EQ(c.runs[0].end, 180u);
  EXPECT_EQ(c.runs[0].end_state, kStateUnknown);
  EXPECT_EQ(c.runs[1].tid, 8) << "the switch after the loss starts a slice; its prev's is lost";
  Breakdown b;
  AttributeCpu(t, 0, 100, 400, &b);
  EXPECT_EQ((b[{Culprit::Kind::kUnknown, 0}]), 220u);
  EXPECT_EQ((b[{Culprit::Kind::kTask, 7}]), 70u);
  EXPECT_EQ((b[{Culprit::Kind::kHardirq, 3}]), 10u);
}

TEST(TimelineBuilder, InterruptsAreSlicesWithTheTaskTheyHit) {
  Synth s;
  s.Switch(100, 1, 0, 7).Softirq(1, 200, 300, 3).Irq(1, 250, 260, 45).Switch(400, 1, 7, 0, 1);
  Timeline t = s.Build();
  const auto& c = t.cpus[1];
  ASSERT_EQ(c.softirqs.size(), 1u);
  EXPECT_EQ(c.softirqs[0].tid, 7);
  ASSERT_EQ(c.hardirqs.size(), 1u);
  EXPECT_EQ(c.hardirqs[0].id, 45);
  // The hard IRQ is carved out of the softirq, both out of the task.
  Breakdown b;
  AttributeCpu(t, 1, 100, 400, &b);
  EXPECT_EQ((b[{Culprit::Kind::kTask, 7}]), 200u);
  EXPECT_EQ((b[{Culprit::Kind::kSoftirq, 3}]), 90u);
  EXPECT_EQ((b[{Culprit::Kind::kHardirq, 45}]), 10u);
}

TEST(TimelineBuilder, AttributedPiecesTileTheIntervalAndAgreeWithTheBreakdown) {
  Synth s;
  // Unknown until 100; task 7 with a softirq and a hard IRQ inside it; a
  // loss; task 8; an IRQ while no run slice covers the CPU.
  s.Switch(100, 1, 0, 7).Softirq(1, 200, 300, 3).Irq(1, 250, 260, 45).Loss(1, 350, 500);
  s.Irq(1, 400, 420, 46).Switch(500, 1, 5, 8).Switch(600, 1, 8, 0, 1).Switch(700, 1, 0, 9);
  Timeline t = s.Build();
  std::vector<AttributedPiece> pieces;
  AttributeCpuPieces(t, 1, 50, 650, &pieces);
  std::sort(pieces.begin(), pieces.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  uint64_t at = 50;
  for (const AttributedPiece& p : pieces) {
    EXPECT_EQ(p.start, at) << "no gap and no overlap";
    at = p.end;
  }
  EXPECT_EQ(at, 650u);
  Breakdown from_pieces, b;
  for (const AttributedPiece& p : pieces) from_pieces[p.culprit] += p.end - p.start;
  AttributeCpu(t, 1, 50, 650, &b);
  EXPECT_EQ(from_pieces, b);
  EXPECT_EQ((b[{Culprit::Kind::kUnknown, 0}]), 50u + 130u);
  EXPECT_EQ((b[{Culprit::Kind::kHardirq, 46}]), 20u);
  EXPECT_EQ((b[{Culprit::Kind::kTask, 7}]), 150u);
  EXPECT_EQ((b[{Culprit::Kind::kTask, 8}]), 100u);
  EXPECT_EQ((b[{Culprit::Kind::kIdle, 0}]), 50u);
}

TEST(TimelineBuilder, SlicesFromEventsOutOfOrderAreTrimmedSoTheyNeverOverlap) {
  // A corrupt trace: CPU 0's switch at 200 arrives after the one at 300, and
  // two hard IRQs overlap. Every reader of a CPU's slices relies on them not
  // overlapping (a placement check looped forever on such a trace).
  TimelineBuilder b;
  auto sw = [](int32_t prev, int32_t next) {
    model::SchedSwitch s;
    s.prev_tid = prev;
    s.next_tid = next;
    return s;
  };
  b.OnEvent({100, 0, 0, sw(0, 7)});
  b.OnEvent({300, 0, 7, sw(7, 8)});
  b.OnEvent({200, 0, 8, sw(8, 9)});
  b.OnEvent({400, 0, 9, sw(9, 0)});
  b.OnEvent({500, 0, 0, sw(0, 5)});
  b.OnEvent({150, 0, 0, model::IrqEntry{3}});
  b.OnEvent({250, 0, 0, model::IrqExit{3, 1}});
  b.OnEvent({120, 0, 0, model::IrqEntry{4}});
  b.OnEvent({180, 0, 0, model::IrqExit{4, 1}});
  Timeline t = b.Finish();
  const auto& irqs = t.cpus[0].hardirqs;
  for (size_t i = 1; i < irqs.size(); ++i) EXPECT_GE(irqs[i].start, irqs[i - 1].end) << i;
  const auto& runs = t.cpus[0].runs;
  ASSERT_GE(runs.size(), 2u);
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_GE(runs[i].start, runs[i - 1].end) << i;
  for (const auto& r : runs) EXPECT_LE(r.start, r.end);
  Breakdown bd;
  AttributeCpu(t, 0, 100, 500, &bd);
  uint64_t sum = 0;
  for (const auto& [who, ns] : bd) sum += ns;
  EXPECT_EQ(sum, 400u) << "the parts add up to the interval";
  // Two runs (task 9 cut; task 8, which "ended" before it began, dropped) and one hard IRQ.
  EXPECT_EQ(t.cpus[0].slices_trimmed, 3u);
  auto a = Analyze(t, AnalysisOptions{});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->loss.slices_trimmed, 3u) << "said in the report's loss header";
}

TEST(TimelineBuilder, NamesThreadsFromSwitchesRenamesAndForks) {
  TimelineBuilder b;
  b.OnProcess(40, 1, "python3", false);
  model::SchedSwitch sw;
  sw.prev_tid = 0;
  sw.next_tid = 41;
  sw.next_comm = model::TaskComm("python3");
  b.OnEvent({100, 0, 0, sw});
  model::ProcessFork fork;  // task_newtask with CLONE_THREAD: tgid from the parent
  fork.parent_tid = 40;
  fork.child_tid = 41;
  fork.is_thread = true;
  fork.child_comm = model::TaskComm("python3");
  b.OnEvent({90, 1, 40, fork});
  model::TaskRename rename;
  rename.tid = 41;
  rename.new_comm = model::TaskComm("pt_data_worker");
  b.OnEvent({150, 0, 41, rename});
  Timeline t = b.Finish();
  EXPECT_EQ(t.ThreadName(41), "pt_data_worker");
  EXPECT_EQ(t.TgidOf(41), 40);
  EXPECT_EQ(t.DescribeThread(41), "pt_data_worker (tid 41, pid 40 python3)");
  EXPECT_FALSE(t.IsKernelThread(41));
}

TEST(TimelineBuilder, KernelThreadsAreKnownByProcessTreeOrName) {
  Synth s;
  s.Process(2, "kthreadd", true).Thread(30, 2, "kworker/1:0");
  s.Thread(31, 0, "ksoftirqd/3");
  s.Thread(32, 0, "myapp");
  Timeline t = s.Build();
  EXPECT_TRUE(t.IsKernelThread(30));
  EXPECT_TRUE(t.IsKernelThread(31));
  EXPECT_FALSE(t.IsKernelThread(32));
  EXPECT_TRUE(t.IsKernelThread(0));
}

}  // namespace
}  // namespace gpunoise::analyze
