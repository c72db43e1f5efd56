// One focus row per CPU, whichever collector reads first.
#include "collect/focus_rows.h"

#include <gtest/gtest.h>

namespace gpunoise::collect {
namespace {

TEST(FocusRowOf, FindsTheCpusRowOrAppendsOneForIt) {
  std::vector<model::FocusCpuCounters> rows;
  FocusRowOf(rows, 3).switches = 7;  // runqlat's columns
  FocusRowOf(rows, 1).hardirq_count = 2;
  FocusRowOf(rows, 3).hardirq_count = 5;  // irqtime's, on the same row
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].cpu, 3u);
  EXPECT_EQ(rows[0].switches, 7u);
  EXPECT_EQ(rows[0].hardirq_count, 5u);
  EXPECT_EQ(rows[1].cpu, 1u);
  EXPECT_EQ(rows[1].hardirq_count, 2u);
  EXPECT_EQ(rows[1].switches, 0u);
}

}  // namespace
}  // namespace gpunoise::collect
