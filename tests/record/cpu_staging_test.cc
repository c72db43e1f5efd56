#include "record/cpu_staging.h"

#include <gtest/gtest.h>

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

TEST(CpuStaging, HoldingBackIsBounded) {
  CpuStaging s(4);
  // Only the first record is of the lowest level: everything would be held,
  // but past the bound the staging is written whole.
  Stage(s, {{10, kTask}, {20, kSoft}, {21, kSoft}});
  EXPECT_TRUE(WriteOut(s, true).empty());
  Stage(s, {{22, kSoft}, {23, kSoft}});
  EXPECT_EQ(WriteOut(s, true).size(), 5u);
}

}  // namespace
}  // namespace gpunoise::record
