#include "record/spare_cpu.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/files.h"
#include "import/test_trace.h"

namespace gpunoise::record {
namespace {

TEST(DeflateThreadWanted, AutoIsOnFromFourCpusAndOnOffAreWhatTheySay) {
  EXPECT_EQ(DeflateThreadWanted("auto", 2), false);
  EXPECT_EQ(DeflateThreadWanted("auto", 3), false);
  EXPECT_EQ(DeflateThreadWanted("auto", 4), true);
  EXPECT_EQ(DeflateThreadWanted("auto", 256), true);
  EXPECT_EQ(DeflateThreadWanted("on", 1), true);
  EXPECT_EQ(DeflateThreadWanted("off", 256), false);
  EXPECT_EQ(DeflateThreadWanted("yes", 4), std::nullopt);
  EXPECT_EQ(DeflateThreadWanted("", 4), std::nullopt);
}

TEST(SpareCpu, UptimeParsesAndBadTextDoesNot) {
  auto t = ParseUptime("44018.34 47678.50\n");
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t->uptime_s, 44018.34);
  EXPECT_DOUBLE_EQ(t->idle_s, 47678.50);
  for (const char* bad : {"", "12.0", "12.0 x", "1 2 3", "-1 2", "1e999999 2"})
    EXPECT_FALSE(ParseUptime(bad)) << bad;
}

TEST(SpareCpu, IdleCpusIsIdleTimeOverElapsedTime) {
  EXPECT_DOUBLE_EQ(IdleCpus({100, 150}, {101, 151.5}), 1.5);
  EXPECT_DOUBLE_EQ(IdleCpus({100, 150}, {101, 150}), 0);
  EXPECT_DOUBLE_EQ(IdleCpus({100, 150}, {100, 151}), 0) << "no time passed";
  EXPECT_DOUBLE_EQ(IdleCpus({100, 150}, {101, 149}), 0) << "a counter that went back";
}

// The decision follows the idle time of each period, holds between
// readings, and is "compress" before the first period and when the file
// cannot be read.
TEST(SpareCpu, CompressesOnlyWithHalfACpuIdleOverThePeriod) {
  testing::ScopedTempDir dir;
  std::string path = dir.path() + "/uptime";
  auto write = [&](const char* text) { std::ofstream(path, std::ios::trunc) << text; };
  constexpr uint64_t kS = 1'000'000'000;
  SpareCpu spare(path, 0.5, kS / 4);
  write("1000.00 1800.00\n");
  EXPECT_TRUE(spare.At(10 * kS)) << "nothing measured yet";
  write("1000.25 1800.05\n");  // 0.2 CPUs idle: a storm
  EXPECT_TRUE(spare.At(10 * kS + kS / 8)) << "the period has not passed: the last decision holds";
  EXPECT_FALSE(spare.At(10 * kS + kS / 4));
  write("1000.50 1800.30\n");  // 1 CPU idle
  EXPECT_FALSE(spare.At(10 * kS + kS / 3)) << "held until the next period";
  EXPECT_TRUE(spare.At(10 * kS + kS / 2));
  write("garbage");
  EXPECT_TRUE(spare.At(11 * kS)) << "unreadable: compress, as without the gate";
  SpareCpu missing(dir.path() + "/none");
  EXPECT_TRUE(missing.At(kS));
  EXPECT_TRUE(missing.At(2 * kS));
}

TEST(SpareCpu, ThisNodesUptimeParses) {
  auto text = ReadFileToString("/proc/uptime");
  ASSERT_TRUE(text.ok());
  auto t = ParseUptime(*text);
  ASSERT_TRUE(t) << *text;
  EXPECT_GT(t->uptime_s, 0);
}

}  // namespace
}  // namespace gpunoise::record
