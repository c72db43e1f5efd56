// Durations as the report prints them: three significant digits in the
// largest unit that keeps them below 1000, never an exponent.
#include "analyze/format_util.h"
#include "analyze/net_metadata.h"

#include <gtest/gtest.h>

namespace gpunoise::analyze {
namespace {

TEST(FormatNs, ThreeDigitsInTheLargestUnitBelowAThousand) {
  EXPECT_EQ(FormatNs(0), "0 ns");
  EXPECT_EQ(FormatNs(999), "999 ns");
  EXPECT_EQ(FormatNs(1'000), "1 us");
  EXPECT_EQ(FormatNs(350'000), "350 us");
  EXPECT_EQ(FormatNs(12'345'678), "12.3 ms");
  EXPECT_EQ(FormatNs(1'440'000'000), "1.44 s");
}

TEST(FormatNs, ValuesThatRoundToAThousandMoveUpAUnitInsteadOfAnExponent) {
  EXPECT_EQ(FormatNs(999'700), "1 ms");
  EXPECT_EQ(FormatNs(999'700'000), "1 s");
  EXPECT_EQ(FormatNs(999'400'000), "999 ms");
  EXPECT_EQ(FormatNs(1'234'000'000'000), "1234 s");
  for (uint64_t ns = 1; ns < 10'000'000'000'000ull; ns = ns * 3 + 7)
    EXPECT_EQ(FormatNs(ns).find('e'), std::string::npos) << ns << " -> " << FormatNs(ns);
}

TEST(JoinCpus, RangesOnlyRunsOfThreeOrMore) {
  EXPECT_EQ(JoinCpus({1}), "1");
  EXPECT_EQ(JoinCpus({0, 2, 3}), "0,2,3");
  EXPECT_EQ(JoinCpus({0, 4, 5, 6, 7}), "0,4-7");
  EXPECT_EQ(CpuPhrase({0, 4, 5, 6, 7}), "CPUs 0,4-7");
}

TEST(ParseCpuListArg, ReadsTheKernelFormatAndSkipsDamagedItems) {
  EXPECT_EQ(ParseCpuListArg("0-3,8"), (std::vector<uint32_t>{0, 1, 2, 3, 8}));
  EXPECT_EQ(ParseCpuListArg("1,x,3-2,5"), (std::vector<uint32_t>{1, 5}));
  EXPECT_TRUE(ParseCpuListArg("").empty());
}

}  // namespace
}  // namespace gpunoise::analyze
