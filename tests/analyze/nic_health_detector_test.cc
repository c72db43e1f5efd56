// link_flap, pcie_degraded and nic_saturation on synthetic timelines: the
// NIC recording's instants and counter tracks (as export/perfetto/
// nic_tracks.h writes them) plus the CPU activity they are judged against.
#include "analyze/nic_health_detector.h"

#include <gtest/gtest.h>

#include <optional>

#include "analyze/analysis.h"
#include "analyze/synthetic.h"
#include "model/events.h"

namespace gpunoise::analyze {
namespace {

using namespace gpunoise::testing;
constexpr int32_t kHog = 300;

model::TrackArg Str(std::string name, std::string v) {
  model::TrackArg a;
  a.name = std::move(name);
  a.type = model::TrackArg::Type::kString;
  a.string_value = std::move(v);
  return a;
}
model::TrackArg Num(std::string name, int64_t v) {
  model::TrackArg a;
  a.name = std::move(name);
  a.type = model::TrackArg::Type::kInt;
  a.int_value = v;
  return a;
}
model::TrackArg Dbl(std::string name, double v) {
  model::TrackArg a;
  a.name = std::move(name);
  a.type = model::TrackArg::Type::kDouble;
  a.double_value = v;
  return a;
}

constexpr uint64_t kRoot = 900, kMeta = 901, kEth = 902;

void Tracks(Synth& s) {
  s.builder().OnTrack({kRoot, 0, "Network", 0, 0, false});
  s.builder().OnTrack({kMeta, 0, "gpunoise network", 0, 0, false});
  s.builder().OnTrack({kEth, kRoot, "eth2", 0, 0, false});
}

void Instant(Synth& s, uint64_t track, uint64_t ts, std::string_view name, std::string_view category,
             std::vector<model::TrackArg> args) {
  model::TrackEventRecord e;
  e.ts = ts;
  e.track_uuid = track;
  e.type = model::TrackEventType::kInstant;
  e.name = name;
  e.category = category;
  e.args = std::move(args);
  s.builder().OnTrackEvent(e);
}

void LinkEvent(Synth& s, uint64_t ts, bool up, int64_t changes) {
  Instant(s, kEth, ts, up ? "carrier_up" : "carrier_down", "gpunoise.link",
          {Str("device", "eth2"), Str("kind", up ? "carrier_up" : "carrier_down"), Num("carrier", up),
           Str("operstate", up ? "up" : "down"), Num("carrier_changes", changes), Str("source", "netlink")});
}

void NicCounters(Synth& s, uint64_t ts, std::vector<model::TrackArg> extra) {
  std::vector<model::TrackArg> args = {Str("device", "eth2"), Str("driver", "ixgbe"), Str("bus_info", "0000:3b:00.0"),
                                       Num("resets", 0), Num("carrier_changes", 2), Num("link_down_events", 1)};
  for (auto& a : extra) args.push_back(std::move(a));
  Instant(s, kMeta, ts, "nic counters", "gpunoise", std::move(args));
}

TEST(NicHealth, ALinkDownAndUpIsALinkFlapWithItsTimes) {
  Synth s;
  s.Switch(kBase, 0, 0, 0);
  Tracks(s);
  LinkEvent(s, kBase + 200 * kMs, false, 5);
  LinkEvent(s, kBase + 450 * kMs, true, 6);
  NicCounters(s, kBase + 900 * kMs, {});
  s.Switch(kBase + 1000 * kMs, 0, 0, 0);
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t);
  std::vector<Finding> flaps;
  for (const auto& f : FindingsOf(a, "nic_trouble"))
    if (f.kind == "link_flap") flaps.push_back(f);
  ASSERT_EQ(flaps.size(), 1u);
  EXPECT_EQ(flaps[0].device, "eth2");
  EXPECT_EQ(flaps[0].start, kBase + 200 * kMs);
  EXPECT_EQ(flaps[0].end, kBase + 450 * kMs);
  EXPECT_EQ(flaps[0].Metric("downs"), 1);
  EXPECT_EQ(flaps[0].Metric("longest_down_ns"), 250e6);
  EXPECT_EQ(flaps[0].Metric("carrier_changes"), 2);
  ASSERT_EQ(flaps[0].windows.size(), 1u);
  EXPECT_NE(flaps[0].title.find("went down 1 time"), std::string::npos) << flaps[0].title;
  // The device table carries the NIC's view.
  const DeviceStats* eth2 = nullptr;
  for (const auto& d : a.devices)
    if (d.device == "eth2") eth2 = &d;
  ASSERT_NE(eth2, nullptr);
  EXPECT_TRUE(eth2->nic_counters);
  EXPECT_EQ(eth2->carrier_changes, 2u);
  EXPECT_EQ(eth2->driver, "ixgbe");
}

TEST(NicHealth, ALinkFlapCarriesTheKernelLinesNamingItsDevice) {
  Synth s;
  s.Switch(kBase, 0, 0, 0);
  Tracks(s);
  LinkEvent(s, kBase + 200 * kMs, false, 5);
  LinkEvent(s, kBase + 450 * kMs, true, 6);
  NicCounters(s, kBase + 900 * kMs, {});
  auto line = [&](uint64_t ts, std::string text, std::string device) {
    model::KernelLogEntry e;
    e.ts = ts;
    e.text = std::move(text);
    e.device = std::move(device);
    s.builder().OnKernelLog(e);
  };
  // The driver's own line (DEVICE= its PCI parent), a bridge reacting (the
  // name in the text), another device's line and one far too late.
  line(kBase + 199 * kMs, "ixgbe 0000:3b:00.0 eth2: NIC Link is Down", "+pci:0000:3b:00.0");
  line(kBase + 452 * kMs, "br0: port 1(eth2) entered forwarding state", "");
  line(kBase + 451 * kMs, "ixgbe 0000:3b:00.1 eth3: NIC Link is Up 10 Gbps", "+pci:0000:3b:00.1");
  line(kBase + 5000 * kMs, "br0: port 1(eth2) entered disabled state", "");
  s.Switch(kBase + 6000 * kMs, 0, 0, 0);
  Timeline t = s.Build();
  std::optional<Finding> flap;
  Analysis a = AnalyzeOrDie(t);
  for (const auto& f : FindingsOf(a, "nic_trouble"))
    if (f.kind == "link_flap") flap = f;
  ASSERT_TRUE(flap);
  EXPECT_EQ(flap->Metric("kernel_lines"), 2);
  std::string evidence;
  for (const auto& e : flap->evidence) evidence += e + "\n";
  EXPECT_NE(evidence.find("kernel: ixgbe 0000:3b:00.0 eth2: NIC Link is Down"), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("kernel: br0: port 1(eth2) entered forwarding state"), std::string::npos) << evidence;
  EXPECT_EQ(evidence.find("eth3"), std::string::npos) << evidence;
  EXPECT_EQ(evidence.find("disabled state"), std::string::npos) << evidence;
}

void SpeedChange(Synth& s, uint64_t ts, int64_t from, int64_t to) {
  Instant(s, kEth, ts, "speed_change", "gpunoise.link",
          {Str("device", "eth2"), Str("kind", "speed_change"), Num("carrier", 1), Num("speed_mbps", to),
           Str("duplex", "full"), Num("previous", from), Num("current", to), Str("source", "sample")});
}

TEST(NicHealth, ASpeedDropIsALinkDownshiftWithOldAndNewSpeeds) {
  Synth s;
  s.Switch(kBase, 0, 0, 0);
  Tracks(s);
  SpeedChange(s, kBase + 300 * kMs, 100000, 25000);
  s.Switch(kBase + 1000 * kMs, 0, 0, 0);
  Timeline t = s.Build();
  std::optional<Finding> d;
  Analysis a = AnalyzeOrDie(t);
  for (const auto& f : FindingsOf(a, "nic_trouble"))
    if (f.kind == "link_downshift") d = f;
  ASSERT_TRUE(d);
  EXPECT_EQ(d->device, "eth2");
  EXPECT_EQ(d->start, kBase + 300 * kMs);
  EXPECT_EQ(d->Metric("from_mbps"), 100000);
  EXPECT_EQ(d->Metric("lowest_mbps"), 25000);
  EXPECT_EQ(d->Metric("end_mbps"), 25000);
  EXPECT_NE(d->title.find("link speed fell from 100 Gb/s to 25 Gb/s"), std::string::npos) << d->title;
  EXPECT_NE(d->title.find("stayed there"), std::string::npos) << d->title;
}

TEST(NicHealth, ASpeedThatOnlyRoseIsNoDownshiftAndARecoveryIsSaid) {
  {
    Synth s;
    s.Switch(kBase, 0, 0, 0);
    Tracks(s);
    SpeedChange(s, kBase + 300 * kMs, 25000, 100000);
    s.Switch(kBase + 1000 * kMs, 0, 0, 0);
    Timeline t = s.Build();
    for (const auto& f : FindingsOf(AnalyzeOrDie(t), "nic_trouble")) EXPECT_NE(f.kind, "link_downshift");
  }
  Synth s;
  s.Switch(kBase, 0, 0, 0);
  Tracks(s);
  SpeedChange(s, kBase + 300 * kMs, 100000, 10000);
  SpeedChange(s, kBase + 600 * kMs, 10000, 100000);
  s.Switch(kBase + 1000 * kMs, 0, 0, 0);
  Timeline t = s.Build();
  std::optional<Finding> d;
  Analysis a = AnalyzeOrDie(t);
  for (const auto& f : FindingsOf(a, "nic_trouble"))
    if (f.kind == "link_downshift") d = f;
  ASSERT_TRUE(d);
  EXPECT_EQ(d->end, kBase + 600 * kMs);
  EXPECT_NE(d->title.find("back to 100 Gb/s"), std::string::npos) << d->title;
}

TEST(NicHealth, CountersThatWentBackDownInOneReadingAreOneNicResetWithTheDriversLine) {
  Synth s;
  s.Switch(kBase, 0, 0, 0);
  Tracks(s);
  NicCounters(s, kBase + 900 * kMs, {});
  for (const char* counter : {"rx_packets", "tx_packets", "rx_missed_errors"})
    Instant(s, kEth, kBase + 300 * kMs, "counter_reset", "gpunoise.link",
            {Str("device", "eth2"), Str("kind", "counter_reset"), Str("counter", counter), Num("previous", 5000),
             Num("current", 3), Str("source", "sample")});
  model::KernelLogEntry line;
  line.ts = kBase + 250 * kMs;
  line.seq = 77;
  line.text = "ixgbe 0000:3b:00.0 eth2: Reset adapter";
  line.device = "+pci:0000:3b:00.0";
  s.builder().OnKernelLog(line);
  s.Switch(kBase + 1000 * kMs, 0, 0, 0);
  Timeline t = s.Build();
  std::optional<Finding> r;
  Analysis a = AnalyzeOrDie(t);
  for (const auto& f : FindingsOf(a, "nic_trouble"))
    if (f.kind == "nic_counter_reset") r = f;
  ASSERT_TRUE(r);
  EXPECT_EQ(r->Metric("resets"), 1);
  EXPECT_EQ(r->Metric("counters"), 3);
  EXPECT_EQ(r->start, kBase + 300 * kMs);
  std::string evidence;
  for (const auto& e : r->evidence) evidence += e + "\n";
  EXPECT_NE(evidence.find("3 counters went back down (rx_packets, tx_packets, rx_missed_errors)"), std::string::npos)
      << evidence;
  // The driver's line, once although it is joined to each counter's event.
  const std::string quoted = "kernel: ixgbe 0000:3b:00.0 eth2: Reset adapter";
  size_t at = evidence.find(quoted);
  ASSERT_NE(at, std::string::npos) << evidence;
  EXPECT_EQ(evidence.find("Reset adapter", at + quoted.size()), std::string::npos) << evidence;
}

TEST(NicHealth, ALinkThatOnlyCameUpIsNoFlap) {
  Synth s;
  s.Switch(kBase, 0, 0, 0);
  Tracks(s);
  LinkEvent(s, kBase + 200 * kMs, true, 1);
  s.Switch(kBase + 1000 * kMs, 0, 0, 0);
  Timeline t = s.Build();
  for (const auto& f : FindingsOf(AnalyzeOrDie(t), "nic_trouble")) EXPECT_NE(f.kind, "link_flap");
}

void Pcie(Synth& s, std::string role, std::string address, uint32_t width, uint32_t max_width, double speed,
          double max_speed, int64_t aer_rise, uint32_t start_width) {
  Instant(s, kMeta, kBase + 900 * kMs, "pcie link", "gpunoise",
          {Str("address", address), Str("role", role), Str("device", role == "nic" ? "eth2" : ""),
           Dbl("speed_gts", speed), Dbl("max_speed_gts", max_speed), Num("width", width), Num("max_width", max_width),
           Num("aer_correctable", 10 + aer_rise), Num("aer_correctable_rise", aer_rise), Num("aer_nonfatal", 0),
           Num("aer_nonfatal_rise", 0), Num("aer_fatal", 0), Num("aer_fatal_rise", 0),
           Num("start_width", start_width), Dbl("start_speed_gts", speed)});
}

TEST(NicHealth, NarrowLinksAndAerErrorsArePcieDegradedButAnIdleGpuSlowingDownIsNot) {
  Synth s;
  s.Switch(kBase, 0, 0, 0);
  Tracks(s);
  Pcie(s, "nic", "0000:3b:00.0", 8, 16, 16, 16, 0, 8);    // narrow
  Pcie(s, "gpu", "0000:18:00.0", 16, 16, 2.5, 32, 0, 16);  // idle GPU at 2.5 GT/s: power saving
  Pcie(s, "gpu", "0000:19:00.0", 16, 16, 32, 32, 4, 16);   // AER errors during the recording
  s.Switch(kBase + 1000 * kMs, 0, 0, 0);
  Timeline t = s.Build();
  std::vector<Finding> pcie;
  for (const auto& f : FindingsOf(AnalyzeOrDie(t), "nic_trouble"))
    if (f.kind == "pcie_degraded") pcie.push_back(f);
  ASSERT_EQ(pcie.size(), 2u);
  EXPECT_NE(pcie[0].title.find("x8 of x16"), std::string::npos) << pcie[0].title;
  EXPECT_EQ(pcie[0].device, "eth2");
  EXPECT_NE(pcie[1].title.find("0000:19:00.0"), std::string::npos) << pcie[1].title;
  EXPECT_EQ(pcie[1].Metric("aer_correctable"), 4);
}

void DropTrack(Synth& s, const std::string& counter, std::vector<std::pair<uint64_t, double>> samples) {
  static uint64_t uuid = 1000;
  ++uuid;
  s.builder().OnTrack({uuid, kEth, "eth2 nic " + counter + "/s", 0, 0, true});
  for (const auto& [ts, v] : samples) {
    model::TrackEventRecord c;
    c.ts = ts;
    c.track_uuid = uuid;
    c.type = model::TrackEventType::kCounter;
    c.counter_value = v;
    s.builder().OnTrackEvent(c);
  }
}

void IrqMap(Synth& s, int32_t queue, uint32_t cpu) {
  Instant(s, kMeta, kBase, "irq",
          "gpunoise", {Num("irq", 40 + queue), Str("name", "eth2-TxRx-" + std::to_string(queue)), Str("device", "eth2"),
                       Num("queue", queue), Str("queue_kind", "txrx"), Str("affinity", std::to_string(cpu)),
                       Str("effective_affinity", std::to_string(cpu))});
}

TEST(NicHealth, DropsOfAQueueWhoseCpuRanSomethingElseAreNicSaturationNamingIt) {
  Synth s;
  s.Process(kHog, "hog").Thread(kHog, kHog, "hog");
  s.Switch(kBase, 1, 0, kHog);  // CPU 1 serves queue 3 and runs the hog all along
  s.Switch(kBase + 1000 * kMs, 1, kHog, 0);
  Tracks(s);
  IrqMap(s, 3, 1);
  DropTrack(s, "rx_queue_3_drops", {{kBase + 100 * kMs, 0}, {kBase + 200 * kMs, 5000}, {kBase + 300 * kMs, 0},
                                    {kBase + 900 * kMs, 0}});
  NicCounters(s, kBase + 950 * kMs, {Num("c.rx_queue_3_drops", 500)});
  Timeline t = s.Build();
  Analysis a = AnalyzeOrDie(t);
  std::vector<Finding> sat;
  for (const auto& f : FindingsOf(a, "nic_trouble"))
    if (f.kind == "nic_saturation") sat.push_back(f);
  ASSERT_EQ(sat.size(), 1u);
  EXPECT_EQ(sat[0].device, "eth2");
  EXPECT_EQ(sat[0].queue, 3);
  EXPECT_EQ(sat[0].cpus, std::vector<uint32_t>{1});
  EXPECT_NEAR(sat[0].Metric("drops"), 500, 1);
  EXPECT_EQ(sat[0].start, kBase + 200 * kMs);
  EXPECT_EQ(sat[0].end, kBase + 300 * kMs);
  EXPECT_NE(sat[0].title.find("did not drain queue 3"), std::string::npos) << sat[0].title;
  EXPECT_NE(sat[0].title.find("hog"), std::string::npos) << sat[0].title;
  EXPECT_EQ(sat[0].culprit_kind, "task");
}

TEST(NicHealth, DropsWhileNetRxIsAtItsBudgetSayItIsTheBudget) {
  Synth s;
  s.Switch(kBase, 1, 0, 0);
  s.PeriodicSoftirq(1, kBase + 200 * kMs, kBase + 300 * kMs, static_cast<uint32_t>(model::SoftirqVec::kNetRx),
                    1 * kMs, 900 * kUs);
  s.Switch(kBase + 1000 * kMs, 1, 0, 0);
  Tracks(s);
  IrqMap(s, 0, 1);
  DropTrack(s, "rx_missed_errors", {{kBase + 200 * kMs, 2000}, {kBase + 300 * kMs, 0}});
  Timeline t = s.Build();
  std::vector<Finding> sat;
  for (const auto& f : FindingsOf(AnalyzeOrDie(t), "nic_trouble"))
    if (f.kind == "nic_saturation") sat.push_back(f);
  ASSERT_EQ(sat.size(), 1u);
  EXPECT_EQ(sat[0].queue, -1);  // a device-level counter: all its receive queues
  EXPECT_NE(sat[0].title.find("NET_RX on CPU 1 was at its budget"), std::string::npos) << sat[0].title;
  EXPECT_GE(sat[0].Metric("netrx_share"), 0.85);
}

TEST(NicHealth, ADriverThatSumsItsQueuesIsJudgedByTheQueuesOnce) {
  Synth s;
  s.Switch(kBase, 1, 0, 0);
  s.Switch(kBase + 1000 * kMs, 1, 0, 0);
  Tracks(s);
  IrqMap(s, 0, 1);
  // virtio_net: rx0_drops and the device's rx_drops rise together.
  DropTrack(s, "rx0_drops", {{kBase + 200 * kMs, 100}, {kBase + 300 * kMs, 0}});
  DropTrack(s, "rx_drops", {{kBase + 200 * kMs, 100}, {kBase + 300 * kMs, 0}});
  Timeline t = s.Build();
  std::vector<Finding> sat;
  for (const auto& f : FindingsOf(AnalyzeOrDie(t), "nic_trouble"))
    if (f.kind == "nic_saturation") sat.push_back(f);
  ASSERT_EQ(sat.size(), 1u);
  EXPECT_EQ(sat[0].queue, 0);
  EXPECT_NEAR(sat[0].Metric("drops"), 10, 0.5);
}

TEST(NicHealth, WithoutSchedulerDataTheFindingSaysSoInsteadOfGuessing) {
  Synth s;
  s.Switch(kBase, 0, 0, 0);  // data on CPU 0 only; queue 2 is served on CPU 1
  s.Switch(kBase + 1000 * kMs, 0, 0, 0);
  Tracks(s);
  IrqMap(s, 2, 1);
  DropTrack(s, "rx_queue_2_drops", {{kBase + 200 * kMs, 1000}, {kBase + 300 * kMs, 0}});
  Timeline t = s.Build();
  std::vector<Finding> sat;
  for (const auto& f : FindingsOf(AnalyzeOrDie(t), "nic_trouble"))
    if (f.kind == "nic_saturation") sat.push_back(f);
  ASSERT_EQ(sat.size(), 1u);
  EXPECT_NE(sat[0].title.find("no scheduler data for CPU 1"), std::string::npos) << sat[0].title;
}

}  // namespace
}  // namespace gpunoise::analyze
