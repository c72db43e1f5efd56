#include "common/start_at.h"

#include <gtest/gtest.h>

#include <chrono>

namespace gpunoise::record {
namespace {

constexpr int64_t kS = 1'000'000'000;

TEST(StartAt, PlusADurationCountsFromNow) {
  auto at = ParseStartAt("+5s", 1000 * kS);
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(*at, 1005 * kS);
  EXPECT_EQ(*ParseStartAt("+250ms", 0), 250'000'000);
}

TEST(StartAt, IsoTimesAreUtcUnlessTheyNameAnOffset) {
  // 2026-12-01T12:40:00Z = 1796128800 s (date -u -d '2026-12-01T12:40:00Z' +%s).
  EXPECT_EQ(*ParseStartAt("2026-12-01T12:40:00Z", 0), 1796128800 * kS);
  EXPECT_EQ(*ParseStartAt("2026-12-01T12:40:00", 0), 1796128800 * kS) << "no zone: UTC";
  EXPECT_EQ(*ParseStartAt("2026-12-01 13:40:00.25+01:00", 0), 1796128800 * kS + 250'000'000);
  EXPECT_EQ(*ParseStartAt("2026-12-01T07:10:00-05:30", 0), 1796128800 * kS);
  EXPECT_EQ(FormatRealtime(1796128800 * kS + 250'000'000), "2026-12-01T12:40:00.250Z");
}

TEST(StartAt, BadTimesAreUsageErrorsNamingTheText) {
  for (const char* bad : {"", "soon", "+", "+5x", "2026-13-01T00:00:00Z", "2026-12-01T12:40", "2026-12-01T12:40:00Q",
                          "2026-12-01T12:40:00+1"}) {
    auto at = ParseStartAt(bad, 0);
    EXPECT_FALSE(at.ok()) << bad;
  }
  auto at = ParseStartAt("soon", 0);
  EXPECT_NE(at.error().message.find("'soon'"), std::string::npos) << at.error().message;
}

TEST(StartAt, WaitUntilRealtimeReturnsAtTheInstant) {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  int64_t target = static_cast<int64_t>(now.tv_sec) * kS + now.tv_nsec + 150'000'000;
  WaitUntilRealtime(target, -1);
  ::clock_gettime(CLOCK_REALTIME, &now);
  int64_t after = static_cast<int64_t>(now.tv_sec) * kS + now.tv_nsec;
  EXPECT_GE(after, target);
  EXPECT_LT(after - target, 50'000'000) << "late by " << (after - target) / 1e6 << " ms";
}

}  // namespace
}  // namespace gpunoise::record
