// The tracker over synthetic readings: steps, resets as events (never a
// negative rate), carrier changes between samples, notifications that
// already reported some of them, devices that go away and come back.
#include "model/nic_counter_tracker.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

NicReading R(const std::string& dev, bool carrier, uint32_t changes, std::vector<NicCounterValue> c) {
  NicReading r;
  r.ifindex = 7;
  r.device = dev;
  r.driver = "virtio_net";
  r.carrier = carrier;
  r.operstate = carrier ? "up" : "down";
  r.carrier_changes = changes;
  r.counters = std::move(c);
  return r;
}

TEST(NicCounterTracker, StepsAndTotalsFromTheBaseline) {
  NicCounterTracker t;
  auto u0 = t.Observe(1000, {R("eth0", true, 1, {{"rx0_drops", 100}, {"rx_kicks", 5}})});
  EXPECT_TRUE(u0.steps.empty());  // the baseline
  auto u1 = t.Observe(2000, {R("eth0", true, 1, {{"rx0_drops", 130}, {"rx_kicks", 5}})});
  ASSERT_EQ(u1.steps.size(), 1u);
  EXPECT_EQ(u1.from, 1000u);
  EXPECT_EQ(u1.to, 2000u);
  EXPECT_EQ(u1.steps[0].name, "rx0_drops");
  EXPECT_EQ(u1.steps[0].delta, 30u);
  t.Observe(3000, {R("eth0", true, 1, {{"rx0_drops", 131}, {"rx_kicks", 9}})});
  auto totals = t.Totals();
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].name, "rx0_drops");
  EXPECT_EQ(totals[0].delta, 31u);
  EXPECT_EQ(totals[0].kind, NicCounterKind::kRxDrop);
  EXPECT_EQ(totals[0].queue, 0);
}

TEST(NicCounterTracker, SpeedDuplexAndAutonegChangesAreEventsWithOldAndNewValues) {
  NicCounterTracker t;
  auto with = [](uint32_t speed, std::string duplex, std::string autoneg) {
    NicReading r = R("eth0", true, 1, {});
    r.speed_mbps = speed;
    r.duplex = std::move(duplex);
    r.autoneg = std::move(autoneg);
    return r;
  };
  t.Observe(1, {with(100000, "full", "on")});
  EXPECT_TRUE(t.Observe(2, {with(100000, "full", "on")}).events.empty());
  // The link renegotiated to 25G half duplex with autonegotiation off.
  auto u = t.Observe(3, {with(25000, "half", "off")});
  ASSERT_EQ(u.events.size(), 3u);
  EXPECT_EQ(u.events[0].kind, LinkEventKind::kSpeedChange);
  EXPECT_EQ(u.events[0].previous, 100000u);
  EXPECT_EQ(u.events[0].current, 25000u);
  EXPECT_EQ(u.events[1].kind, LinkEventKind::kDuplexChange);
  EXPECT_EQ(u.events[1].previous_duplex, "full");
  EXPECT_EQ(u.events[1].duplex, "half");
  EXPECT_EQ(u.events[2].kind, LinkEventKind::kAutonegChange);
  EXPECT_EQ(u.events[2].previous_autoneg, "on");
  EXPECT_EQ(u.events[2].autoneg, "off");
  // Unknown settings (the link went down: no speed, no duplex) are no change.
  EXPECT_TRUE(t.Observe(4, {with(0, "", "")}).events.empty());
  EXPECT_TRUE(t.Observe(5, {with(25000, "half", "off")}).events.empty());
  EXPECT_EQ(LinkEventKindName(LinkEventKind::kDuplexChange), "duplex_change");
  EXPECT_EQ(LinkEventKindFromName("autoneg_change"), LinkEventKind::kAutonegChange);
}

TEST(NicCounterTracker, AResetIsAnEventAndCountsFromZero) {
  NicCounterTracker t;
  t.Observe(1, {R("eth0", true, 1, {{"rx_missed_errors", 5000}})});
  auto u = t.Observe(2, {R("eth0", true, 1, {{"rx_missed_errors", 7}})});
  ASSERT_EQ(u.steps.size(), 1u);
  EXPECT_EQ(u.steps[0].delta, 7u);
  ASSERT_EQ(u.events.size(), 1u);
  EXPECT_EQ(u.events[0].kind, LinkEventKind::kCounterReset);
  EXPECT_EQ(u.events[0].counter, "rx_missed_errors");
  EXPECT_EQ(u.events[0].previous, 5000u);
  EXPECT_EQ(u.events[0].current, 7u);
  EXPECT_EQ(t.Devices()[0].resets, 1u);
}

TEST(NicCounterTracker, AFlapBetweenTwoSamplesIsDownThenUp) {
  NicCounterTracker t;
  t.Observe(1, {R("eth0", true, 1, {})});
  auto u = t.Observe(2, {R("eth0", true, 3, {})});  // went down and came back between reads
  ASSERT_EQ(u.events.size(), 2u);
  EXPECT_EQ(u.events[0].kind, LinkEventKind::kCarrierDown);
  EXPECT_EQ(u.events[1].kind, LinkEventKind::kCarrierUp);
  EXPECT_EQ(u.events[1].source, "sample");
  auto d = t.Devices();
  EXPECT_EQ(d[0].carrier_changes, 2u);
  EXPECT_EQ(d[0].link_down_events, 1u);
  auto down = t.Observe(3, {R("eth0", false, 4, {})});
  ASSERT_EQ(down.events.size(), 1u);
  EXPECT_EQ(down.events[0].kind, LinkEventKind::kCarrierDown);
}

TEST(NicCounterTracker, NotificationsAreNotCountedTwice) {
  NicCounterTracker t;
  t.Observe(1, {R("eth0", true, 1, {})});
  LinkEvent down;
  down.device = "eth0";
  down.kind = LinkEventKind::kCarrierDown;
  down.carrier_changes = 2;
  EXPECT_TRUE(t.Notice(down));
  LinkEvent up = down;
  up.kind = LinkEventKind::kCarrierUp;
  up.carrier_changes = 3;
  EXPECT_TRUE(t.Notice(up));
  auto u = t.Observe(2, {R("eth0", true, 3, {})});
  EXPECT_TRUE(u.events.empty());  // both changes were announced at their own time
  EXPECT_EQ(t.Devices()[0].link_down_events, 1u);
}

// The kernel counts a carrier change at once but may announce it later
// (linkwatch): a reading that saw it first reports it, and the late
// notification is not a second event.
TEST(NicCounterTracker, ALateNotificationOfAChangeAReadingReportedIsDropped) {
  NicCounterTracker t;
  t.Observe(1, {R("eth0", true, 1, {})});
  auto u = t.Observe(2, {R("eth0", false, 2, {})});
  ASSERT_EQ(u.events.size(), 1u);
  EXPECT_EQ(u.events[0].kind, LinkEventKind::kCarrierDown);
  LinkEvent late;
  late.device = "eth0";
  late.kind = LinkEventKind::kCarrierDown;
  late.carrier_changes = 2;
  EXPECT_FALSE(t.Notice(late));
  LinkEvent up = late;
  up.kind = LinkEventKind::kCarrierUp;
  up.carrier_changes = 3;
  EXPECT_TRUE(t.Notice(up));
  EXPECT_TRUE(t.Observe(3, {R("eth0", true, 3, {})}).events.empty());
  EXPECT_EQ(t.Devices()[0].link_down_events, 1u);
  EXPECT_EQ(t.Devices()[0].carrier_changes, 2u);
}

TEST(NicCounterTracker, ADeviceThatGoesAwayAndComesBackStartsANewBaseline) {
  NicCounterTracker t;
  t.Observe(1, {R("eth0", true, 1, {{"rx_drops", 10}})});
  auto gone = t.Observe(2, {});
  ASSERT_EQ(gone.events.size(), 1u);
  EXPECT_EQ(gone.events[0].kind, LinkEventKind::kRemoved);
  auto back = t.Observe(3, {R("eth0", true, 1, {{"rx_drops", 2}})});
  ASSERT_EQ(back.events.size(), 1u);
  EXPECT_EQ(back.events[0].kind, LinkEventKind::kAppeared);
  EXPECT_TRUE(back.steps.empty());  // no step across the gap, and no reset
  auto later = t.Observe(4, {R("eth0", true, 1, {{"rx_drops", 5}})});
  ASSERT_EQ(later.steps.size(), 1u);
  EXPECT_EQ(later.steps[0].delta, 3u);
}

}  // namespace
}  // namespace gpunoise::model
