#include <gtest/gtest.h>

#include "record/record_session.h"

namespace gpunoise::record {
namespace {

TEST(DefaultRingBytesPerCpu, FewCpusGetSixteenMegabytesManyShareTheBudget) {
  EXPECT_EQ(DefaultRingBytesPerCpu(2), 16ull << 20);
  EXPECT_EQ(DefaultRingBytesPerCpu(16), 16ull << 20);
  EXPECT_EQ(DefaultRingBytesPerCpu(17), 8ull << 20);
  EXPECT_EQ(DefaultRingBytesPerCpu(128), 2ull << 20);
  for (size_t n : {1, 3, 64, 100, 192, 1024}) EXPECT_LE(DefaultRingBytesPerCpu(n) * n, 256ull << 20) << n;
}

TEST(DefaultRingBytesPerCpu, NeverBelowTheFloorOnHugeMachines) {
  EXPECT_EQ(DefaultRingBytesPerCpu(4096), 256ull << 10);
}

}  // namespace
}  // namespace gpunoise::record
