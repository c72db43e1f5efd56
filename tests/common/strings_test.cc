#include "common/strings.h"

#include <gtest/gtest.h>

namespace gpunoise {
namespace {

TEST(Strings, ParseByteSizeUnits) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("4k"), 4096u);
  EXPECT_EQ(*ParseByteSize("4M"), 4u << 20);
  EXPECT_EQ(*ParseByteSize("1G"), 1u << 30);
  EXPECT_EQ(*ParseByteSize("1.5M"), 3u << 19);
  EXPECT_FALSE(ParseByteSize("4X").ok());
  EXPECT_FALSE(ParseByteSize("M").ok());
}

TEST(Strings, ParseDurationUnits) {
  EXPECT_EQ(*ParseDuration("10"), 10'000'000'000u);
  EXPECT_EQ(*ParseDuration("10s"), 10'000'000'000u);
  EXPECT_EQ(*ParseDuration("250ms"), 250'000'000u);
  EXPECT_EQ(*ParseDuration("2m"), 120'000'000'000u);
  EXPECT_EQ(*ParseDuration("1.5"), 1'500'000'000u);
  EXPECT_FALSE(ParseDuration("soon").ok());
  EXPECT_FALSE(ParseDuration("5 parsecs").ok());
}

TEST(Strings, SplitKeepsEmptyFields) {
  auto parts = Split("a,,b", ',');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
}

TEST(Strings, SplitWhitespaceDropsRunsOfSpacesAndTabs) {
  auto words = SplitWhitespace("  \tCPU0   CPU1\t\tCPU3 ");
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(words[0], "CPU0");
  EXPECT_EQ(words[1], "CPU1");
  EXPECT_EQ(words[2], "CPU3");
  EXPECT_TRUE(SplitWhitespace(" \t ").empty());
}

TEST(Strings, FixedCStringStopsAtNulOrLength) {
  const char comm[16] = {'a', 'b', 'c', 0, 'x'};
  EXPECT_EQ(FixedCString(comm, 16), "abc");
  const char full[4] = {'a', 'b', 'c', 'd'};
  EXPECT_EQ(FixedCString(full, 4), "abcd");
}

TEST(Strings, HumanBytes) {
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(3u << 20), "3.0 MiB");
}

TEST(Strings, LowerChangesOnlyAsciiLetters) {
  EXPECT_EQ(Lower("eth0-TxRx-3"), "eth0-txrx-3");
  EXPECT_EQ(Lower("NET_RX @PCI:0000:3B"), "net_rx @pci:0000:3b");
  EXPECT_EQ(Lower(""), "");
  // Bytes past ASCII (UTF-8 "Ä") stay as they are.
  EXPECT_EQ(Lower("\xc3\x84X"), "\xc3\x84x");
}

}  // namespace
}  // namespace gpunoise
