#include "model/events.h"

#include <gtest/gtest.h>

#include <vector>

#include "model/event_view.h"

namespace gpunoise::model {
namespace {

TEST(TaskComm, TruncatesToFifteenCharacters) {
  TaskComm c("a-very-long-thread-name");
  EXPECT_EQ(c.view(), "a-very-long-thr");
}

TEST(TaskComm, FromBytesIsNulTerminatedEvenWhenFull) {
  char bytes[16];
  std::memset(bytes, 'x', sizeof(bytes));
  EXPECT_EQ(TaskComm::FromBytes(bytes).view().size(), 15u);
}

TEST(ExecPath, EqualPathsShareOneCopyThatOutlivesTheirSource) {
  std::string source = "/usr/bin/python3";
  ExecPath a(source), b(std::string_view("/usr/bin/python3"));
  source.assign("/overwritten/afterwards");
  EXPECT_EQ(a.view(), "/usr/bin/python3");
  EXPECT_EQ(a.view().data(), b.view().data()) << "one interned copy";
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == ExecPath("/usr/bin/bash"));
  EXPECT_TRUE(ExecPath("").empty());
  EXPECT_EQ(ExecPath(""), ExecPath());
  // An event carrying one is copied by its bytes (model/events.h asserts it).
  Event e;
  e.payload = ProcessExec{1, 1, 1, TaskComm("python3"), a};
  Event copy;
  std::memcpy(static_cast<void*>(&copy), &e, sizeof(Event));
  EXPECT_EQ(std::get<ProcessExec>(copy.payload).filename.view(), "/usr/bin/python3");
  // A hostile trace's path is cut at PATH_MAX.
  EXPECT_EQ(ExecPath(std::string(ExecPath::kMaxLen + 100, 'p')).view().size(), ExecPath::kMaxLen);
}

TEST(EventView, ReadsARangeInPlaceOrThroughAnOrderOfPositions) {
  std::vector<Event> events(3);
  for (size_t i = 0; i < events.size(); ++i) events[i].ts = 10 * (i + 1);
  EventView in_place(events);
  ASSERT_EQ(in_place.size(), 3u);
  EXPECT_EQ(&in_place[1], &events[1]) << "no copy";
  EXPECT_EQ(in_place.back().ts, 30u);
  const std::vector<uint32_t> order = {2, 0, 1};
  EventView ordered(events.data(), order);
  std::vector<uint64_t> seen;
  for (const Event& e : ordered) seen.push_back(e.ts);
  EXPECT_EQ(seen, (std::vector<uint64_t>{30, 10, 20}));
  EXPECT_EQ(ordered.front().ts, 30u);
  EXPECT_EQ(ordered.back().ts, 20u);
  EXPECT_TRUE(EventView().empty());
}

TEST(SoftirqName, NamesEveryKernelVector) {
  EXPECT_EQ(SoftirqName(3), "NET_RX");
  EXPECT_EQ(SoftirqName(2), "NET_TX");
  EXPECT_EQ(SoftirqName(9), "RCU");
  EXPECT_EQ(SoftirqName(10), "?");
}

TEST(VectorName, NamesEveryKind) {
  for (uint32_t k = 0; k < kNumVectorKinds; ++k)
    EXPECT_NE(VectorName(static_cast<VectorKind>(k)), "?");
}

}  // namespace
}  // namespace gpunoise::model
