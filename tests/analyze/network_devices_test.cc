// The analysis's network device rows: a device known only from its IRQ
// names has its packets counted only when the recording ran the net group.
#include <gtest/gtest.h>

#include "analyze/analysis.h"
#include "analyze/synthetic.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;

constexpr int32_t kFocus = 100;

// eth0 known from its queue IRQ alone, which fires 10 times; the session
// summary lists `collectors` (none: a trace without one; "!name": one that
// could not start).
const DeviceStats* Eth0(const std::vector<std::string>& collectors, Analysis* a) {
  Synth s;
  s.Process(kFocus, "trainer").Thread(kFocus, kFocus, "trainer");
  s.IrqName(45, "eth0-TxRx-1");
  s.Switch(kBase, 1, 0, kFocus);
  s.Switch(kBase + 1000 * kMs, 1, kFocus, 0, 1);
  s.PeriodicIrq(0, kBase, kBase + 1000 * kMs, 45, 100 * kMs, 2 * kUs);
  Timeline t = s.Build();
  if (!collectors.empty()) {
    model::SessionInfo session;
    for (const std::string& name : collectors) {
      model::CollectorReport c;
      const bool disabled = name.starts_with('!');
      c.name = disabled ? name.substr(1) : name;
      c.state = disabled ? model::CollectorState::kDisabled : model::CollectorState::kActive;
      session.collectors.push_back(c);
    }
    t.session = session;
  }
  *a = AnalyzeOrDie(t, {"trainer"});
  for (const DeviceStats& d : a->devices)
    if (d.device == "eth0") return &d;
  return nullptr;
}

TEST(NetworkDevices, ADeviceKnownOnlyFromItsIrqsHasUnknownPacketsWhenTheNetGroupDidNotRun) {
  Analysis a;
  const DeviceStats* eth0 = Eth0({"sched", "irq"}, &a);  // record --events sched,irq
  ASSERT_NE(eth0, nullptr);
  EXPECT_FALSE(eth0->packets_counted) << "no collector counted its packets: unknown, not 0";
  EXPECT_EQ(eth0->irq_count, 10u);
}

TEST(NetworkDevices, ADeviceKnownOnlyFromItsIrqsCountedNoPacketsWhenTheNetGroupRan) {
  // The net group writes totals only for devices that did something; one
  // without totals counted 0.
  Analysis a;
  const DeviceStats* eth0 = Eth0({"sched", "irq", "napi", "netdev", "drops"}, &a);
  ASSERT_NE(eth0, nullptr);
  EXPECT_TRUE(eth0->packets_counted);
  EXPECT_EQ(eth0->rx_packets, 0u);

  // Its packets come from device statistics, which need no tracepoint: the
  // netdev collector's failing to start leaves them counted.
  const DeviceStats* no_netdev = Eth0({"sched", "irq", "!napi", "!netdev", "!drops"}, &a);
  ASSERT_NE(no_netdev, nullptr);
  EXPECT_TRUE(no_netdev->packets_counted);

  // A trace that lists no collectors (older recordings) is taken as counted.
  const DeviceStats* unlisted = Eth0({}, &a);
  ASSERT_NE(unlisted, nullptr);
  EXPECT_TRUE(unlisted->packets_counted);
}

}  // namespace
}  // namespace gpunoise::analyze
