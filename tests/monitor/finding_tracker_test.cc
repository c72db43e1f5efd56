#include "monitor/finding_tracker.h"

#include <gtest/gtest.h>

namespace gpunoise::monitor {
namespace {

Observation Storm(int cpu, std::string title = "NET_RX storm") {
  Observation o;
  o.what.detector = "softirq_storm";
  o.what.kind = "net_rx";
  o.what.cpu = cpu;
  o.what.title = std::move(title);
  return o;
}

TEST(FindingTracker, AnEpisodeStartsOnceAndEndsAfterQuietIntervals) {
  FindingTracker t(2);
  auto c = t.Observe({Storm(1)}, 0, 10);
  ASSERT_EQ(c.started.size(), 1u);
  EXPECT_EQ(c.started[0].start, 0u);
  EXPECT_EQ(t.totals().at("softirq_storm"), 1u);
  c = t.Observe({Storm(1, "NET_RX storm, worse")}, 10, 20);
  EXPECT_TRUE(c.started.empty());
  EXPECT_EQ(t.Active().at(0).title, "NET_RX storm, worse");
  // One quiet interval: still the same episode (and still active).
  c = t.Observe({}, 20, 30);
  EXPECT_TRUE(c.ended.empty());
  EXPECT_EQ(t.Active().size(), 1u);
  c = t.Observe({Storm(1)}, 30, 40);
  EXPECT_TRUE(c.started.empty());
  EXPECT_EQ(t.totals().at("softirq_storm"), 1u);
  // Two quiet intervals end it.
  t.Observe({}, 40, 50);
  c = t.Observe({}, 50, 60);
  ASSERT_EQ(c.ended.size(), 1u);
  EXPECT_EQ(c.ended[0].start, 0u);
  EXPECT_EQ(c.ended[0].last_seen, 40u);
  EXPECT_EQ(c.ended[0].intervals, 3u);
  EXPECT_TRUE(t.Active().empty());
  // A new storm is a new episode.
  c = t.Observe({Storm(1)}, 60, 70);
  EXPECT_EQ(c.started.size(), 1u);
  EXPECT_EQ(t.totals().at("softirq_storm"), 2u);
}

TEST(FindingTracker, DifferentPlacesAreDifferentEpisodes) {
  FindingTracker t;
  auto c = t.Observe({Storm(0), Storm(1)}, 0, 10);
  EXPECT_EQ(c.started.size(), 2u);
  EXPECT_EQ(t.totals().at("softirq_storm"), 2u);
  EXPECT_EQ(t.Active().size(), 2u);
}

}  // namespace
}  // namespace gpunoise::monitor
