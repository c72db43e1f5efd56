#include "analyze/window_totals.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace gpunoise::analyze {
namespace {

using Ranked = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(WindowTotals, ASpanInsideOneWindowAddsToThatWindow) {
  WindowTotals w(1000, 100);
  w.Add(1010, 1050);
  w.Add(1060, 1070);
  EXPECT_EQ(w.Worst(3), (Ranked{{0, 50}}));
}

TEST(WindowTotals, ASpanAcrossWindowsFillsEachFullOneAndSplitsItsEdges) {
  WindowTotals w(0, 100);
  w.Add(50, 420);  // 50 in window 0, 100 in 1..3, 20 in 4
  EXPECT_EQ(w.Worst(10), (Ranked{{1, 100}, {2, 100}, {3, 100}, {0, 50}, {4, 20}}));
}

TEST(WindowTotals, TheWorstRankByTimeAndTheEarlierWinsATie) {
  WindowTotals w(0, 100);
  w.Add(0, 1000);   // 100 in windows 0..9
  w.Add(530, 560);  // window 5 gets 30 more
  w.Add(720, 740);  // window 7 gets 20 more
  EXPECT_EQ(w.Worst(3), (Ranked{{5, 130}, {7, 120}, {0, 100}}));
}

TEST(WindowTotals, TimeBeforeTheOriginIsLeftOut) {
  WindowTotals w(1000, 100);
  w.Add(900, 1030);
  w.Add(10, 990);
  EXPECT_EQ(w.Worst(3), (Ranked{{0, 30}}));
}

TEST(WindowTotals, ASpanOfNearlyTwoToTheSixtyFourCostsTwoWindowsAndOneStep) {
  // A hostile trace's wait: its full windows are never walked one by one.
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  WindowTotals w(0, 100'000'000);
  w.Add(50'000'000, kMax - 5);
  auto worst = w.Worst(2);
  ASSERT_EQ(worst.size(), 2u);
  EXPECT_EQ(worst[0], (std::pair<uint64_t, uint64_t>{1, 100'000'000}));
  EXPECT_EQ(worst[1], (std::pair<uint64_t, uint64_t>{2, 100'000'000}));
}

TEST(WindowTotals, NoTimeNoWindows) {
  WindowTotals w(0, 100);
  w.Add(300, 300);
  EXPECT_TRUE(w.Worst(3).empty());
}

}  // namespace
}  // namespace gpunoise::analyze
