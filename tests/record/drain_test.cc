#include "record/drain.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "export/perfetto/trace_sink.h"
#include "import/test_trace.h"
#include "import/trace_reader.h"
#include "record/switch_record.h"

namespace gpunoise::record {
namespace {

using test_records::SwitchRecord;

struct ReadBack {
  testing::RecordingSink sink;
  bool ok = false;
};

void Read(const std::string& path, ReadBack* back) {
  import::TraceReader reader(back->sink);
  auto stats = reader.ReadFile(path);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  back->ok = true;
}

TEST(WriteStaged, WritesEachCpusStagedEventsAndMarksACpuWhoseRingLostRecords) {
  testing::ScopedTempDir dir;
  std::string path = dir.path() + "/t.pftrace";
  auto sink = perfetto::TraceSink::Create(path);
  ASSERT_TRUE(sink.ok()) << sink.error().message;
  RecordIntake intake(1);
  intake.OnRecord(1, SwitchRecord(1000, 7, 8));
  intake.OnRecord(1, SwitchRecord(2000, 8, 7));
  model::SwitchChain chain;
  // CPU 0 staged nothing, but its ring lost 3 records since the last write.
  std::vector<uint64_t> lost = {3, 0};
  ASSERT_TRUE(WriteStaged(intake.batches(), lost, true, 0, &chain, **sink).ok());
  EXPECT_EQ(intake.batches()[1].staging.staged(), 0u);
  EXPECT_EQ(intake.batches()[0].lost_seen, 3u);
  EXPECT_EQ(chain.total_breaks(), 0u);  // 7 -> 8 -> 7 chains
  // The same count again is no new loss: nothing more is written.
  ASSERT_TRUE(WriteStaged(intake.batches(), lost, true, 0, &chain, **sink).ok());
  ASSERT_TRUE((*sink)->Commit().ok());

  ReadBack back;
  Read(path, &back);
  ASSERT_TRUE(back.ok);
  ASSERT_EQ(back.sink.events.size(), 2u);
  EXPECT_EQ(back.sink.events[0].cpu, 1u);
  EXPECT_EQ(back.sink.events[0].ts, 1000u);
  ASSERT_EQ(back.sink.losses.size(), 1u);
  EXPECT_EQ(back.sink.losses[0].cpu, 0u);
}

// What a written trace holds, in the order read: "cpu ts kind" per event,
// and the CPUs marked lost.
std::vector<std::string> Contents(const std::string& path) {
  ReadBack back;
  Read(path, &back);
  std::vector<std::string> out;
  for (const model::Event& e : back.sink.events)
    out.push_back(fmt::format("{} {} {}", e.cpu, e.ts, model::EventKindIndex(e)));
  for (const auto& l : back.sink.losses) out.push_back(fmt::format("lost {}", l.cpu));
  return out;
}

// Drain lanes (record/drain_lanes.h) encode each CPU's bundle beside the
// drain thread: the file holds the same events in the same order as with
// the drain alone, and the same CPUs are marked lost.
TEST(WriteStaged, TwoLanesWriteWhatOneThreadWritesInTheSameOrder) {
  testing::ScopedTempDir dir;
  std::vector<std::vector<std::string>> contents;
  std::vector<uint64_t> breaks;
  for (size_t lanes_asked : {1, 2, 3}) {
    std::string path = fmt::format("{}/t{}.pftrace", dir.path(), lanes_asked);
    auto sink = perfetto::TraceSink::Create(path);
    ASSERT_TRUE(sink.ok()) << sink.error().message;
    std::unique_ptr<DrainLanes> lanes;
    if (lanes_asked > 1) {
      auto started = DrainLanes::Start(lanes_asked, **sink, 4);
      ASSERT_TRUE(started.ok()) << started.error().message;
      lanes = std::move(*started);
      EXPECT_EQ(lanes->tids().size(), lanes_asked - 1);
    }
    RecordIntake intake(4);
    model::SwitchChain chain;
    for (int turn = 0; turn < 3; ++turn) {
      for (uint32_t cpu = 0; cpu <= 4; ++cpu) {
        if (cpu == 3) continue;  // a CPU with nothing staged
        // Out of order within a turn: the staging sorts.
        for (uint64_t i : {3, 1, 2})
          intake.OnRecord(cpu, SwitchRecord(1'000'000 * (turn + 1) + cpu * 1000 + i * 10, 7 + static_cast<int32_t>(i),
                                            8 + static_cast<int32_t>(i)));
      }
      // CPU 2's ring lost records in the second turn, CPU 3's in the third.
      std::vector<uint64_t> lost = {0, 0, turn >= 1 ? 5u : 0u, turn >= 2 ? 1u : 0u, 0};
      ASSERT_TRUE(WriteStaged(intake.batches(), lost, turn == 2, 0, &chain, **sink, lanes.get()).ok());
    }
    ASSERT_TRUE((*sink)->Commit().ok());
    contents.push_back(Contents(path));
    breaks.push_back(chain.total_breaks());
  }
  ASSERT_EQ(contents[0].size(), 4u * 3 * 3 + 2) << "12 switches a turn, and two CPUs marked lost";
  EXPECT_EQ(contents[1], contents[0]);
  EXPECT_EQ(contents[2], contents[0]);
  EXPECT_EQ(breaks[1], breaks[0]);
  EXPECT_EQ(breaks[2], breaks[0]);
}

TEST(DrainLanesFor, OneLanePer128OnlineCpusAndAtMostEight) {
  EXPECT_EQ(DrainLanesFor(1), 1u);
  EXPECT_EQ(DrainLanesFor(2), 1u);
  EXPECT_EQ(DrainLanesFor(128), 1u);
  EXPECT_EQ(DrainLanesFor(129), 2u);
  EXPECT_EQ(DrainLanesFor(256), 2u);
  EXPECT_EQ(DrainLanesFor(4096), 8u);
}

TEST(DrainLanes, OneLaneIsNoLanes) {
  testing::ScopedTempDir dir;
  auto sink = perfetto::TraceSink::Create(dir.path() + "/t.pftrace");
  ASSERT_TRUE(sink.ok());
  EXPECT_FALSE(DrainLanes::Start(1, **sink, 1).ok());
}

TEST(DiscardStaged, CountsWhatWasStagedAsUnwrittenByKind) {
  RecordIntake intake(0);
  intake.OnRecord(0, SwitchRecord(1000, 7, 8));
  intake.OnRecord(0, SwitchRecord(2000, 8, 7));
  DiscardStaged(intake.batches());
  const CpuBatch& b = intake.batches()[0];
  EXPECT_EQ(b.staging.staged(), 0u);
  EXPECT_EQ(b.unwritten, 2u);
  EXPECT_EQ(b.unwritten_by_kind.at("sched_switch"), 2u);
}

}  // namespace
}  // namespace gpunoise::record
