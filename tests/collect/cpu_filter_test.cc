// The CPU filter a collector object gets before load (bpf/cpu_filter.bpf.h).
#include <gtest/gtest.h>

#include "collect/collector.h"

namespace gpunoise::collect {
namespace {

TEST(SetCpuFilter, SetsOneBitPerCpuAndLeavesOutCpusPastTheMask) {
  bool filter = false;
  unsigned long long mask[2] = {};
  SetCpuFilter({0, 3, 64, 127, 128, -1}, filter, mask);
  EXPECT_TRUE(filter);
  EXPECT_EQ(mask[0], (1ull << 0) | (1ull << 3));
  EXPECT_EQ(mask[1], (1ull << 0) | (1ull << 63));
}

TEST(SetCpuFilter, NoCpusMeanNoFilter) {
  bool filter = false;
  unsigned long long mask[16] = {};
  SetCpuFilter({}, filter, mask);
  EXPECT_FALSE(filter);
  for (auto word : mask) EXPECT_EQ(word, 0u);
}

}  // namespace
}  // namespace gpunoise::collect
