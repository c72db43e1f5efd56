#include "record/drain.h"

#include <gtest/gtest.h>

#include <vector>

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
