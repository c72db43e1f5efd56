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
