// The shared-memory log protocol every span-log collector reads with
// (collect/seq_ring.h): whole entries in order, a half-written one left for
// the next read, and what a lap overwrote counted, never handed out.
#include "collect/seq_ring.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpunoise::collect {
namespace {

struct Entry {
  uint64_t seq;
  uint64_t value;
};

constexpr uint64_t kSize = 8;

// What a program does: claim index i (next = i + 1), write, then seq = i + 1.
void Write(Entry* ring, uint64_t i, uint64_t value) {
  ring[i & (kSize - 1)] = {i + 1, value};
}

std::vector<uint64_t> Read(const Entry* ring, uint64_t next, uint64_t& cursor, uint64_t& lost) {
  std::vector<uint64_t> out;
  ReadSeqRing(ring, kSize, next, cursor, lost, [&](const Entry& e) { out.push_back(e.value); });
  return out;
}

TEST(SeqRing, WholeEntriesComeInOrderAndTheReadResumesWhereItStopped) {
  Entry ring[kSize] = {};
  uint64_t cursor = 0, lost = 0;
  for (uint64_t i = 0; i < 3; ++i) Write(ring, i, 100 + i);
  EXPECT_EQ(Read(ring, 3, cursor, lost), (std::vector<uint64_t>{100, 101, 102}));
  for (uint64_t i = 3; i < 5; ++i) Write(ring, i, 100 + i);
  EXPECT_EQ(Read(ring, 5, cursor, lost), (std::vector<uint64_t>{103, 104}));
  EXPECT_EQ(cursor, 5u);
  EXPECT_EQ(lost, 0u);
}

TEST(SeqRing, AnEntryStillBeingWrittenIsLeftForTheNextRead) {
  Entry ring[kSize] = {};
  uint64_t cursor = 0, lost = 0;
  Write(ring, 0, 10);
  // Index 1 is claimed (next = 3) but not yet stamped; 2 is done.
  Write(ring, 2, 12);
  EXPECT_EQ(Read(ring, 3, cursor, lost), (std::vector<uint64_t>{10}));
  EXPECT_EQ(cursor, 1u);
  Write(ring, 1, 11);
  EXPECT_EQ(Read(ring, 3, cursor, lost), (std::vector<uint64_t>{11, 12}));
  EXPECT_EQ(lost, 0u);
}

TEST(SeqRing, WhatALapOverwroteBeforeTheReadIsCountedLost) {
  Entry ring[kSize] = {};
  uint64_t cursor = 0, lost = 0;
  for (uint64_t i = 0; i < 20; ++i) Write(ring, i, i);
  // 20 written into 8 slots: the first 12 are gone.
  EXPECT_EQ(Read(ring, 20, cursor, lost), (std::vector<uint64_t>{12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_EQ(lost, 12u);
}

TEST(SeqRing, AnEntryOfALaterLapInItsSlotIsCountedLostNotHandedOut) {
  Entry ring[kSize] = {};
  uint64_t cursor = 0, lost = 0;
  for (uint64_t i = 0; i < 4; ++i) Write(ring, i, i);
  // The reader saw next = 4, but meanwhile index 9 (slot 1) was written.
  Write(ring, 9, 99);
  EXPECT_EQ(Read(ring, 4, cursor, lost), (std::vector<uint64_t>{0, 2, 3}));
  EXPECT_EQ(lost, 1u);
}

}  // namespace
}  // namespace gpunoise::collect
