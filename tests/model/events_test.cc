#include "model/events.h"

#include <gtest/gtest.h>

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
