#include "record/cpu_staging.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace gpunoise::record {
namespace {

// A record as the ring hands it over: its timestamp and the context it was
// made in.
struct Rec {
  uint64_t ts;
  uint16_t flags;
};

void Stage(CpuStaging& s, std::initializer_list<Rec> recs) {
  for (const Rec& r : recs) {
    model::Event& e = s.Slot();
    e = model::Event{};
    e.ts = r.ts;
    e.common_flags = r.flags;
    e.payload = model::SchedSwitch{};
    s.Push();
  }
}

std::vector<uint64_t> WriteOut(CpuStaging& s, bool cut) {
  std::vector<uint64_t> ts;
  for (const model::Event& e : s.Writable(cut)) ts.push_back(e.ts);
  s.Written();
  return ts;
}

constexpr uint16_t kTask = 0;
constexpr uint16_t kSoft = model::kFlagSoftirq;
constexpr uint16_t kHard = model::kFlagHardirq;

TEST(CpuStaging, AFullDrainIsWrittenWholeAndSorted) {
  CpuStaging s;
  // A task record interrupted before its timestamp: ring order 105, 100, 101.
  Stage(s, {{90, kTask}, {105, kTask}, {100, kSoft}, {101, kSoft}});
  EXPECT_EQ(WriteOut(s, false), (std::vector<uint64_t>{90, 100, 101, 105}));
  EXPECT_EQ(s.staged(), 0u);
}

TEST(CpuStaging, ACutDrainHoldsBackFromTheLastTaskRecord) {
  CpuStaging s;
  // The cut falls inside the softirq that interrupted the record stamped 105.
  Stage(s, {{90, kTask}, {105, kTask}, {100, kSoft}});
  EXPECT_EQ(WriteOut(s, true), (std::vector<uint64_t>{90}));
  EXPECT_EQ(s.staged(), 2u);
  // The next drain brings the rest of the softirq, then task records.
  Stage(s, {{101, kSoft}, {102, kHard}, {110, kTask}});
  EXPECT_EQ(WriteOut(s, false), (std::vector<uint64_t>{100, 101, 102, 105, 110}));
}

TEST(CpuStaging, TimestampsNeverDecreaseAcrossCutDrains) {
  // Every cut position of one nested sequence: what is written, drain after
  // drain, never goes back in time.
  const std::vector<Rec> ring = {{10, kTask}, {50, kTask}, {20, kSoft}, {30, kSoft}, {25, kHard},
                                 {40, kSoft}, {60, kTask}, {70, kSoft}, {80, kTask}};
  for (size_t cut = 1; cut < ring.size(); ++cut) {
    CpuStaging s;
    std::vector<uint64_t> written;
    for (size_t i = 0; i < cut; ++i) Stage(s, {ring[i]});
    for (uint64_t ts : WriteOut(s, true)) written.push_back(ts);
    for (size_t i = cut; i < ring.size(); ++i) Stage(s, {ring[i]});
    for (uint64_t ts : WriteOut(s, false)) written.push_back(ts);
    ASSERT_EQ(written.size(), ring.size()) << "cut after " << cut;
    for (size_t i = 1; i < written.size(); ++i)
      EXPECT_LE(written[i - 1], written[i]) << "cut after " << cut << ", position " << i;
  }
}

TEST(CpuStaging, AStormInInterruptContextHoldsBackFromItsLowestLevel) {
  CpuStaging s;
  // No task record at all (ksoftirqd-free NET_RX storm on the irq stack):
  // softirq records are the lowest level, hard irqs nest in them.
  Stage(s, {{10, kSoft}, {20, kSoft}, {15, kHard}, {30, kSoft}, {25, kHard}});
  EXPECT_EQ(WriteOut(s, true), (std::vector<uint64_t>{10, 15, 20}));
  EXPECT_EQ(s.staged(), 2u);
}

TEST(CpuStaging, ACutDrainHoldsBackOnlyTheLastRecordOfEachLevel) {
  CpuStaging s;
  // The only task record came first; a softirq storm follows it. Each
  // level's last record may still be open (what is unread may be older than
  // it); every other record bounds what is unread.
  Stage(s, {{10, kTask}, {20, kSoft}, {21, kSoft}, {23, kSoft}, {22, kHard}});
  EXPECT_EQ(WriteOut(s, true), (std::vector<uint64_t>{10, 20, 21}));
  EXPECT_EQ(s.staged(), 2u);
}

TEST(CpuStaging, BothEventsOfTheLastRecordOfALevelAreHeldBack) {
  CpuStaging s;
  // A softirq slice (entry and exit in one record) is the last softirq
  // record: an entry whose exit program found it still opening carries the
  // exit's time, so neither event bounds what is unread.
  Stage(s, {{10, kSoft}, {20, kSoft}});
  model::Event& entry = s.Slot();
  entry = model::Event{};
  entry.ts = 30;
  entry.common_flags = kSoft;
  entry.payload = model::SoftirqEntry{};
  s.Push(false, 0, true);
  Stage(s, {{30, kSoft}});
  EXPECT_EQ(WriteOut(s, true), (std::vector<uint64_t>{10, 20}));
  EXPECT_EQ(s.staged(), 2u);
}

TEST(CpuStaging, HoldingBackIsBounded) {
  CpuStaging s(4);
  s.set_batching(1);
  // No flush read: everything waits for the floor, until the bound.
  Stage(s, {{10, kTask}, {20, kSoft}, {21, kSoft}});
  EXPECT_TRUE(WriteOut(s, true).empty());
  Stage(s, {{22, kSoft}, {23, kSoft}});
  EXPECT_EQ(WriteOut(s, true).size(), 5u);
  EXPECT_EQ(s.written_early(), 5u) << "counted";
}

// The merge over each source's runs gives what a stable sort by time gives:
// random sources (direct, two streams), each nearly ascending with
// inversions, many equal timestamps; the tid marks arrival order.
TEST(CpuStaging, TheMergeOfEachSourcesRunsIsAStableSortByTime) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    CpuStaging s;
    s.set_batching(0b11);
    std::vector<std::pair<uint64_t, int32_t>> want;
    std::array<uint64_t, 3> clock{};
    size_t n = 1 + rng() % 3000;
    for (size_t i = 0; i < n; ++i) {
      uint32_t source = rng() % 3;  // 0 direct, 1 + stream
      clock[source] += rng() % 4;   // equal timestamps often
      uint64_t ts = clock[source];
      if (rng() % 16 == 0) ts -= std::min<uint64_t>(ts, rng() % 8);  // a nested record's inversion
      model::Event& e = s.Slot();
      e = model::Event{};
      e.ts = ts;
      e.tid = static_cast<int32_t>(i);
      e.payload = model::SchedSwitch{};
      s.Push(source != 0, source ? source - 1 : 0);
      want.push_back({ts, static_cast<int32_t>(i)});
    }
    std::stable_sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    auto got = s.Writable(false, true);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i].ts, want[i].first) << "round " << round << ", event " << i;
      ASSERT_EQ(got[i].tid, want[i].second) << "round " << round << ", event " << i;
    }
    s.Written();
  }
}

}  // namespace
}  // namespace gpunoise::record
