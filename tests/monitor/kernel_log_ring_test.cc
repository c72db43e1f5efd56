// The flight recorder's kernel log ring: bounded in records, bytes and age;
// what its bound pushes out inside the window, and what the kernel's ring
// lost before the monitor read it, is counted for the window it belongs to.
#include "monitor/kernel_log_ring.h"

#include <gtest/gtest.h>

namespace gpunoise::monitor {
namespace {

constexpr uint64_t kS = 1'000'000'000;

model::KernelLogEntry At(uint64_t ts, std::string text = "line") {
  model::KernelLogEntry e;
  e.ts = ts;
  e.text = std::move(text);
  return e;
}

TEST(KernelLogRing, KeepsTheWindowAndForgetsOlderRecordsWithoutCountingThem) {
  KernelLogRing ring(100, 1 << 20, 5 * kS);
  ring.Add({At(10 * kS, "a"), At(12 * kS, "b")}, 0, 12 * kS);
  ring.Add({At(16 * kS, "c")}, 0, 16 * kS);
  ring.Trim(16 * kS);  // a is 6 s old
  KernelLogRing::Window w = ring.Since(0);
  ASSERT_EQ(w.entries.size(), 2u);
  EXPECT_EQ(w.entries[0].text, "b");
  EXPECT_EQ(w.entries[1].text, "c");
  EXPECT_EQ(w.lost, 0u);  // aged out, not lost
  EXPECT_EQ(ring.overwritten(), 0u);
  EXPECT_EQ(ring.Since(13 * kS).entries.size(), 1u);
}

TEST(KernelLogRing, RecordsPushedOutByTheBoundAreLossOfTheirWindow) {
  KernelLogRing ring(3, 1 << 20, 60 * kS);
  std::vector<model::KernelLogEntry> burst;
  for (uint64_t i = 0; i < 5; ++i) burst.push_back(At(10 * kS + i * kS, std::to_string(i)));
  ring.Add(std::move(burst), 0, 15 * kS);
  EXPECT_EQ(ring.records(), 3u);
  EXPECT_EQ(ring.overwritten(), 2u);
  KernelLogRing::Window all = ring.Since(0);
  ASSERT_EQ(all.entries.size(), 3u);
  EXPECT_EQ(all.entries.front().text, "2");  // the newest kept
  EXPECT_EQ(all.lost, 2u);                   // 0 and 1 were in this window
  // A dump whose window starts after them lost nothing of its own.
  EXPECT_EQ(ring.Since(12 * kS).lost, 0u);
  EXPECT_EQ(ring.Since(11 * kS).lost, 1u);
}

TEST(KernelLogRing, TheByteBoundCountsTheRecordsText) {
  const uint64_t one = KernelLogRing::SizeOf(At(0, std::string(200, 'x')));
  KernelLogRing ring(1000, 3 * one, 60 * kS);
  for (uint64_t i = 0; i < 10; ++i) ring.Add({At(kS + i, std::string(200, 'x'))}, 0, kS + i);
  EXPECT_EQ(ring.records(), 3u);
  EXPECT_LE(ring.bytes(), 3 * one);
  EXPECT_EQ(ring.overwritten(), 7u);
  EXPECT_EQ(ring.Since(0).lost, 7u);
}

TEST(KernelLogRing, KernelSequenceGapsAreLossAtTheNextRecordsTime) {
  KernelLogRing ring(100, 1 << 20, 60 * kS);
  ring.Add({At(10 * kS)}, 0, 10 * kS);
  ring.Add({At(20 * kS), At(21 * kS)}, 4, 21 * kS);  // 4 records overwritten in the kernel before these
  ring.Add({}, 3, 30 * kS);                          // and 3 with nothing after them yet
  EXPECT_EQ(ring.Since(0).lost, 7u);
  EXPECT_EQ(ring.Since(15 * kS).lost, 7u);
  EXPECT_EQ(ring.Since(25 * kS).lost, 3u);
  EXPECT_EQ(ring.Since(31 * kS).lost, 0u);
  ring.Trim(85 * kS);  // the records aged out, and the first mark with them
  EXPECT_EQ(ring.Since(0).lost, 3u);
  ring.Trim(91 * kS);
  EXPECT_EQ(ring.Since(0).lost, 0u);
  EXPECT_EQ(ring.records(), 0u);
}

TEST(KernelLogRing, ManyLossMarksMergeWithoutLosingTheCount) {
  KernelLogRing ring(1, 1 << 20, 3600 * kS);
  for (uint64_t i = 0; i < 1000; ++i) ring.Add({At(kS + i * kS)}, 1, kS + i * kS);
  // 1000 kernel gaps and 999 overwrites, in at most 256 marks.
  EXPECT_EQ(ring.Since(0).lost, 1999u);
  EXPECT_EQ(ring.overwritten(), 999u);
}

}  // namespace
}  // namespace gpunoise::monitor
