#include "monitor/record_ring.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

extern "C" {
#include "bpf/irq.h"
}

namespace gpunoise::monitor {
namespace {

std::vector<uint8_t> Record(uint64_t ts, uint32_t vec) {
  gn_softirq r{};
  r.hdr.ts = ts;
  r.hdr.kind = GN_REC_SOFTIRQ_ENTRY;
  r.vec = vec;
  std::vector<uint8_t> out(sizeof(r));
  std::memcpy(out.data(), &r, sizeof(r));
  return out;
}

std::vector<uint64_t> Timestamps(const RecordRing& ring) {
  std::vector<uint64_t> out;
  ring.ForEach([&](const RecordRing::Entry& e) {
    if (e.record.empty()) return;
    uint64_t ts;
    std::memcpy(&ts, e.record.data(), sizeof(ts));
    out.push_back(ts);
  });
  return out;
}

TEST(RecordRing, KeepsRecordsInOrderWithTheirCpu) {
  RecordRing ring(1 << 20, 1'000'000'000'000);
  ring.Append(0, Record(10, 3));
  ring.Append(1, Record(11, 3));
  ring.Append(0, Record(12, 1));
  EXPECT_EQ(Timestamps(ring), (std::vector<uint64_t>{10, 11, 12}));
  std::vector<uint32_t> cpus;
  ring.ForEach([&](const RecordRing::Entry& e) { cpus.push_back(e.cpu); });
  EXPECT_EQ(cpus, (std::vector<uint32_t>{0, 1, 0}));
  EXPECT_EQ(ring.records(), 3u);
  EXPECT_EQ(ring.complete_from(), 0u);
  EXPECT_EQ(ring.oldest_ts(), 10u);
  EXPECT_EQ(ring.newest_ts(), 12u);
}

TEST(RecordRing, MemoryIsBoundedAndTheOldestGoFirst) {
  const uint64_t max_bytes = 4 << 20;
  RecordRing ring(max_bytes, UINT64_MAX / 2);
  for (uint64_t ts = 1; ts <= 1'000'000; ++ts) ring.Append(static_cast<uint32_t>(ts % 4), Record(ts, 3));
  EXPECT_LE(ring.bytes_in_use(), max_bytes);
  EXPECT_GT(ring.complete_from(), 0u);
  std::vector<uint64_t> ts = Timestamps(ring);
  ASSERT_FALSE(ts.empty());
  EXPECT_EQ(ts.back(), 1'000'000u);
  EXPECT_GT(ts.front(), ring.complete_from());
  for (size_t i = 1; i < ts.size(); ++i) ASSERT_EQ(ts[i], ts[i - 1] + 1);
  // 32 bytes per entry: nearly all of the memory holds records.
  EXPECT_GT(ts.size(), max_bytes / 32 * 9 / 10);
}

TEST(RecordRing, TrimDropsChunksOlderThanTheWindow) {
  RecordRing ring(1 << 20, 1000);  // 64 KiB chunks (2048 entries), 1 us window
  for (uint64_t ts = 1; ts <= 100'000; ++ts) ring.Append(0, Record(ts * 10, 3));
  ring.Trim(1'000'000);
  std::vector<uint64_t> ts = Timestamps(ring);
  ASSERT_FALSE(ts.empty());
  EXPECT_EQ(ts.back(), 1'000'000u);
  // Whole chunks go: what is left starts within one chunk of the cutoff.
  EXPECT_GE(ts.front() + 2048 * 10 * 2, 1'000'000u - 1000);
  EXPECT_GE(ring.complete_from(), ts.front() - 10);
}

TEST(RecordRing, LossMarksAreKeptInPlace) {
  RecordRing ring(1 << 20, UINT64_MAX / 2);
  ring.Append(1, Record(5, 3));
  ring.MarkLoss(1);
  ring.Append(1, Record(9, 3));
  std::vector<std::pair<bool, size_t>> seen;
  ring.ForEach([&](const RecordRing::Entry& e) { seen.emplace_back(e.loss_before, e.record.size()); });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_FALSE(seen[0].first);
  EXPECT_TRUE(seen[1].first);
  EXPECT_EQ(seen[1].second, 0u);
  EXPECT_EQ(seen[2].second, sizeof(gn_softirq));
}

TEST(RecordRing, TakeAllHandsOverEverythingAndStartsEmpty) {
  RecordRing ring(1 << 20, UINT64_MAX / 2);
  ring.Append(0, Record(1, 3));
  ring.Append(0, Record(2, 3));
  RecordRing taken = ring.TakeAll();
  EXPECT_EQ(Timestamps(taken), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(ring.records(), 0u);
  EXPECT_TRUE(Timestamps(ring).empty());
  // What comes next is complete only from after the handed-over records.
  EXPECT_EQ(ring.complete_from(), 2u);
  ring.Append(1, Record(3, 3));
  EXPECT_EQ(Timestamps(ring), (std::vector<uint64_t>{3}));
}

TEST(RecordRing, ConsumeAllVisitsInOrderAndEmpties) {
  RecordRing ring(1 << 20, UINT64_MAX / 2);
  for (uint64_t ts = 1; ts <= 10000; ++ts) ring.Append(0, Record(ts, 3));
  uint64_t expect = 1;
  bool ordered = true;
  ring.ConsumeAll([&](const RecordRing::Entry& e) {
    uint64_t ts;
    std::memcpy(&ts, e.record.data(), sizeof(ts));
    ordered = ordered && ts == expect++;
  });
  EXPECT_TRUE(ordered);
  EXPECT_EQ(expect, 10001u);
  EXPECT_EQ(ring.records(), 0u);
}

}  // namespace
}  // namespace gpunoise::monitor
