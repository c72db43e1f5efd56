// The NIC track writer decoded with libprotobuf: per-counter rate tracks
// under the device's track (0 when a counter that rose before is quiet),
// link events on the device's track with typed args, PCIe samples only on
// change plus a retrain instant, and the end totals.
#include "export/perfetto/nic_tracks.h"

#include <gtest/gtest.h>

#include <map>

#include "export/perfetto/net_tracks.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/track_event_writer.h"
#include "export/perfetto/parsed_packet.h"

namespace gpunoise::perfetto {
namespace {

struct Capture {
  std::vector<TracePacket> packets;
  NicTrackWriter::PacketOut out() {
    return [this](const TracePacketBuilder& p) {
      packets.push_back(Parsed(p));
      return OkStatus();
    };
  }
  std::map<uint64_t, TrackDescriptor> Tracks() const {
    std::map<uint64_t, TrackDescriptor> t;
    for (const auto& p : packets)
      if (p.has_track_descriptor()) t[p.track_descriptor().uuid()] = p.track_descriptor();
    return t;
  }
  std::vector<std::tuple<std::string, uint64_t, double>> Samples() const {
    auto tracks = Tracks();
    std::vector<std::tuple<std::string, uint64_t, double>> out;
    for (const auto& p : packets)
      if (p.has_track_event() && p.track_event().type() == TrackEvent::TYPE_COUNTER)
        out.emplace_back(tracks[p.track_event().track_uuid()].name(), p.timestamp(),
                         p.track_event().double_counter_value());
    return out;
  }
  std::vector<const TracePacket*> Instants(const std::string& name) const {
    std::vector<const TracePacket*> out;
    for (const auto& p : packets)
      if (p.has_track_event() && p.track_event().type() == TrackEvent::TYPE_INSTANT && p.track_event().name() == name)
        out.push_back(&p);
    return out;
  }
};

std::map<std::string, std::string> Args(const TracePacket& p) {
  std::map<std::string, std::string> args;
  for (const auto& a : p.track_event().debug_annotations())
    args[a.name()] = a.has_string_value() ? a.string_value()
                     : a.has_uint_value() ? std::to_string(a.uint_value())
                     : a.has_bool_value() ? (a.bool_value() ? "true" : "false")
                     : a.has_double_value() ? std::to_string(a.double_value())
                                            : std::to_string(a.int_value());
  return args;
}

TEST(NicTracks, CounterRatesSitUnderTheDeviceTrackAndQuietCountersGetZero) {
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  NicTrackWriter nic(writer, net, cap.out());
  model::NicTrackerUpdate u1;
  u1.from = 1'000'000'000;
  u1.to = 1'100'000'000;
  u1.steps = {{"eth2", "rx_queue_3_drops", 50}};
  ASSERT_TRUE(nic.WriteUpdate(u1).ok());
  model::NicTrackerUpdate u2;
  u2.from = u1.to;
  u2.to = 1'200'000'000;
  ASSERT_TRUE(nic.WriteUpdate(u2).ok());
  ASSERT_TRUE(nic.CloseRates(1'250'000'000).ok());
  auto samples = cap.Samples();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(std::get<0>(samples[0]), "eth2 nic rx_queue_3_drops/s");
  EXPECT_EQ(std::get<1>(samples[0]), 1'000'000'000u);
  EXPECT_DOUBLE_EQ(std::get<2>(samples[0]), 500);  // 50 in 100 ms
  EXPECT_EQ(std::get<1>(samples[1]), 1'100'000'000u);
  EXPECT_DOUBLE_EQ(std::get<2>(samples[1]), 0);
  EXPECT_EQ(std::get<1>(samples[2]), 1'250'000'000u);
  // The counter track's parent is the device track under "Network".
  auto tracks = cap.Tracks();
  uint64_t parent = 0, root = 0;
  for (const auto& [uuid, t] : tracks)
    if (t.name() == "eth2 nic rx_queue_3_drops/s") parent = t.parent_uuid();
  ASSERT_NE(parent, 0u);
  EXPECT_EQ(tracks[parent].name(), "eth2");
  root = tracks[parent].parent_uuid();
  EXPECT_EQ(tracks[root].name(), "Network");
}

TEST(NicTracks, LinkEventsAreInstantsOnTheDeviceTrackWithTypedArgs) {
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  NicTrackWriter nic(writer, net, cap.out());
  model::LinkEvent e;
  e.ts = 5'000;
  e.device = "eth2";
  e.ifindex = 4;
  e.kind = model::LinkEventKind::kCarrierDown;
  e.operstate = "lowerlayerdown";
  e.carrier_changes = 7;
  e.source = "netlink";
  ASSERT_TRUE(nic.WriteLinkEvent(e).ok());
  auto downs = cap.Instants("carrier_down");
  ASSERT_EQ(downs.size(), 1u);
  const TracePacket& p = *downs[0];
  EXPECT_EQ(p.timestamp(), 5'000u);
  ASSERT_EQ(p.track_event().categories_size(), 1);
  EXPECT_EQ(p.track_event().categories(0), "gpunoise.link");
  EXPECT_EQ(cap.Tracks()[p.track_event().track_uuid()].name(), "eth2");
  auto args = Args(p);
  EXPECT_EQ(args["kind"], "carrier_down");
  EXPECT_EQ(args["carrier"], "false");
  EXPECT_EQ(args["carrier_changes"], "7");
  EXPECT_EQ(args["operstate"], "lowerlayerdown");
  EXPECT_EQ(args["source"], "netlink");
}

TEST(NicTracks, AKernelLogLineOfALinkEventIsAnInstantAtItsOwnTimeOnTheDeviceTrack) {
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  NicTrackWriter nic(writer, net, cap.out());
  model::LinkEvent e;
  e.ts = 5'000;
  e.device = "eth2";
  e.kind = model::LinkEventKind::kSpeedChange;
  e.previous = 100000;
  e.current = 25000;
  e.duplex = "half";
  e.previous_duplex = "full";
  e.source = "sample";
  ASSERT_TRUE(nic.WriteLinkEvent(e).ok());
  model::KernelLogEntry line;
  line.ts = 4'200;
  line.seq = 991;
  line.level = 6;
  line.text = "ice 0000:5e:00.0 eth2: NIC Link is up 25 Gbps Full Duplex";
  line.device = "+pci:0000:5e:00.0";
  ASSERT_TRUE(nic.WriteLinkKernelLog(e, line).ok());
  auto speed = cap.Instants("speed_change");
  ASSERT_EQ(speed.size(), 1u);
  auto sargs = Args(*speed[0]);
  EXPECT_EQ(sargs["previous"], "100000");
  EXPECT_EQ(sargs["current"], "25000");
  EXPECT_EQ(sargs["duplex"], "half");
  EXPECT_EQ(sargs["previous_duplex"], "full");
  auto lines = cap.Instants("kernel log");
  ASSERT_EQ(lines.size(), 1u);
  const TracePacket& p = *lines[0];
  EXPECT_EQ(p.timestamp(), 4'200u);
  EXPECT_EQ(p.track_event().categories(0), "gpunoise.link");
  EXPECT_EQ(p.track_event().track_uuid(), speed[0]->track_event().track_uuid());
  EXPECT_EQ(cap.Tracks()[p.track_event().track_uuid()].name(), "eth2");
  auto args = Args(p);
  EXPECT_EQ(args["device"], "eth2");
  EXPECT_EQ(args["text"], line.text);
  EXPECT_EQ(args["seq"], "991");
  EXPECT_EQ(args["level"], "6");
  EXPECT_EQ(args["kernel_device"], "+pci:0000:5e:00.0");
  EXPECT_EQ(args["link_event"], "speed_change");
  EXPECT_EQ(args["link_event_ts"], "5000");
  EXPECT_EQ(args.count("kind"), 0u);  // never read back as a link event itself
}

TEST(NicTracks, PcieIsSampledOnChangeAndARetrainIsAnInstant) {
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  NicTrackWriter nic(writer, net, cap.out());
  model::PcieLinkState s;
  s.address = "0000:3b:00.0";
  s.role = "nic";
  s.device = "eth2";
  s.width = 16;
  s.max_width = 16;
  s.speed_gts = 16;
  s.max_speed_gts = 16;
  s.aer_correctable = 0;
  ASSERT_TRUE(nic.WritePcie(10, {s}).ok());
  ASSERT_TRUE(nic.WritePcie(20, {s}).ok());  // unchanged: nothing
  model::PcieLinkState narrow = s;
  narrow.width = 8;
  narrow.aer_correctable = 3;
  ASSERT_TRUE(nic.WritePcie(30, {narrow}).ok());
  std::map<std::string, std::vector<std::pair<uint64_t, double>>> by_track;
  for (const auto& [name, ts, v] : cap.Samples()) by_track[name].push_back({ts, v});
  EXPECT_EQ(by_track["0000:3b:00.0 link width"], (std::vector<std::pair<uint64_t, double>>{{10, 16}, {30, 8}}));
  EXPECT_EQ(by_track["0000:3b:00.0 link GT/s"].size(), 1u);
  EXPECT_EQ(by_track["0000:3b:00.0 aer errors"], (std::vector<std::pair<uint64_t, double>>{{10, 0}, {30, 3}}));
  auto retrains = cap.Instants("pcie retrain");
  ASSERT_EQ(retrains.size(), 1u);
  EXPECT_EQ(Args(*retrains[0])["previous_width"], "16");
  EXPECT_EQ(Args(*retrains[0])["width"], "8");

  ASSERT_TRUE(nic.WriteTotals(40, {{"eth2", "rx_queue_3_drops", model::NicCounterKind::kRxDrop, 3, 50}},
                              {{"eth2", {"ixgbe", "0000:3b:00.0", 1, 2, 1}}}, {s}, {narrow})
                  .ok());
  auto totals = cap.Instants("nic counters");
  ASSERT_EQ(totals.size(), 1u);
  auto t = Args(*totals[0]);
  EXPECT_EQ(t["device"], "eth2");
  EXPECT_EQ(t["driver"], "ixgbe");
  EXPECT_EQ(t["c.rx_queue_3_drops"], "50");
  EXPECT_EQ(t["resets"], "1");
  EXPECT_EQ(t["carrier_changes"], "2");
  auto links = cap.Instants("pcie link");
  ASSERT_EQ(links.size(), 1u);
  auto l = Args(*links[0]);
  EXPECT_EQ(l["width"], "8");
  EXPECT_EQ(l["start_width"], "16");
  EXPECT_EQ(l["aer_correctable_rise"], "3");
  EXPECT_EQ(cap.Tracks()[totals[0]->track_event().track_uuid()].name(), "gpunoise network");
}

}  // namespace
}  // namespace gpunoise::perfetto
