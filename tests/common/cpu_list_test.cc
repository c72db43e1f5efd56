#include "common/cpu_list.h"

#include <gtest/gtest.h>

namespace gpunoise {
namespace {

TEST(CpuList, ParsesRangesAndSingles) {
  auto cpus = ParseCpuList("0-3,8,10-11");
  ASSERT_TRUE(cpus.ok());
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
}

TEST(CpuList, SortsAndDeduplicates) {
  auto cpus = ParseCpuList("5,1-2,2,1");
  ASSERT_TRUE(cpus.ok());
  EXPECT_EQ(*cpus, (std::vector<int>{1, 2, 5}));
}

TEST(CpuList, RejectsGarbage) {
  EXPECT_FALSE(ParseCpuList("").ok());
  EXPECT_FALSE(ParseCpuList("a").ok());
  EXPECT_FALSE(ParseCpuList("3-1").ok());
  EXPECT_FALSE(ParseCpuList("1,,2").ok());
  EXPECT_FALSE(ParseCpuList("-1").ok());
}

TEST(CpuList, FormatsRoundTrip) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({7}), "7");
}

TEST(CpuList, FormatsRunsAsRanges) {
  EXPECT_EQ(FormatCpuList({0, 1, 3}), "0-1,3");
  EXPECT_EQ(FormatCpuList({2, 3, 4, 5, 9, 10}), "2-5,9-10");
}

TEST(CpuList, FormatsRunsShorterThanMinRunOneByOne) {
  EXPECT_EQ(FormatCpuList({0, 1, 5, 6, 7}, 3), "0,1,5-7");
  EXPECT_EQ(FormatCpuList({0, 2, 3}, 3), "0,2,3");
  EXPECT_EQ(FormatCpuList({4}, 3), "4");
}

TEST(CpuList, FormatsUnsignedCpusWithoutOverflowAtTheTop) {
  EXPECT_EQ(FormatCpuList(std::vector<uint32_t>{0, 1, 2, 8}), "0-2,8");
  EXPECT_EQ(FormatCpuList(std::vector<uint32_t>{4294967294u, 4294967295u}), "4294967294-4294967295");
  EXPECT_EQ(FormatCpuList(std::vector<int>{2147483646, 2147483647}), "2147483646-2147483647");
}

TEST(CpuList, ParsedTextFormatsBackToTheSameText) {
  for (std::string_view text : {"0-3,8,10-11", "7", "0-1,3", "0,2,4-5"}) {
    auto cpus = ParseCpuList(text);
    ASSERT_TRUE(cpus.ok()) << text;
    EXPECT_EQ(FormatCpuList(*cpus), text);
  }
}

TEST(CpuMask, ParsesHexMasksWithCommaGroups) {
  auto cpus = ParseCpuMask("00000001,00000005");
  ASSERT_TRUE(cpus.ok());
  EXPECT_EQ(*cpus, (std::vector<int>{0, 2, 32}));
  auto all = ParseCpuMask("f");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 4u);
  EXPECT_FALSE(ParseCpuMask("xyz").ok());
}

TEST(CpuList, OnlineCpusAreASubsetOfPossible) {
  auto online = OnlineCpus();
  auto possible = PossibleCpus();
  ASSERT_FALSE(online.empty());
  for (int cpu : online) EXPECT_NE(std::find(possible.begin(), possible.end(), cpu), possible.end());
}

}  // namespace
}  // namespace gpunoise
