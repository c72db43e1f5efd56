#include "analyze/thresholds.h"

#include <gtest/gtest.h>

namespace gpunoise::analyze {
namespace {

TEST(Thresholds, DefaultsAreTheDocumentedOnes) {
  Thresholds t;
  EXPECT_EQ(t.GetNs("softirq.window"), 100'000'000u);
  EXPECT_DOUBLE_EQ(t.Get("softirq.share"), 0.30);
  EXPECT_EQ(t.Format("softirq.window"), "100 ms");
  EXPECT_EQ(t.Format("softirq.share"), "30%");
  EXPECT_EQ(t.Format("nic.drop_rate"), "100/s");
}

TEST(Thresholds, SetTakesUnitsPercentagesAndRates) {
  Thresholds t;
  ASSERT_TRUE(t.Set("softirq.window=250ms").ok());
  EXPECT_EQ(t.GetNs("softirq.window"), 250'000'000u);
  ASSERT_TRUE(t.Set("softirq.share=45%").ok());
  EXPECT_DOUBLE_EQ(t.Get("softirq.share"), 0.45);
  ASSERT_TRUE(t.Set("softirq.share = 0.2").ok());
  EXPECT_DOUBLE_EQ(t.Get("softirq.share"), 0.2);
  ASSERT_TRUE(t.Set("nic.drop_rate=50/s").ok());
  EXPECT_DOUBLE_EQ(t.Get("nic.drop_rate"), 50);
}

TEST(Thresholds, BadAssignmentsSayWhatIsWrong) {
  Thresholds t;
  auto unknown = t.Set("softirq.shares=3");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown threshold 'softirq.shares'"), std::string::npos);
  EXPECT_NE(unknown.error().message.find("softirq.share"), std::string::npos) << "lists the known ones";
  EXPECT_FALSE(t.Set("softirq.share=150%").ok());
  EXPECT_FALSE(t.Set("softirq.window=fast").ok());
  EXPECT_FALSE(t.Set("softirq.window").ok());
  EXPECT_FALSE(t.Set("nic.drop_rate=-3").ok());
}

}  // namespace
}  // namespace gpunoise::analyze
