#include "export/perfetto/net_tracks.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/track_event_writer.h"
#include "model/track_identity.h"
#include "export/perfetto/parsed_packet.h"

namespace gpunoise::perfetto {
namespace {

constexpr model::NetDeviceKey kEth0{100, 2};

struct Capture {
  std::vector<TracePacket> packets;
  NetTrackWriter::PacketOut out() {
    return [this](const TracePacketBuilder& p) {
      packets.push_back(Parsed(p));
      return OkStatus();
    };
  }
  std::map<uint64_t, std::string> TrackNames() const {
    std::map<uint64_t, std::string> names;
    for (const auto& p : packets)
      if (p.has_track_descriptor()) names[p.track_descriptor().uuid()] = p.track_descriptor().name();
    return names;
  }
  // (track name, ts, value) of every counter sample.
  std::vector<std::tuple<std::string, uint64_t, double>> Samples() const {
    auto names = TrackNames();
    std::vector<std::tuple<std::string, uint64_t, double>> out;
    for (const auto& p : packets)
      if (p.has_track_event() && p.track_event().type() == TrackEvent::TYPE_COUNTER)
        out.emplace_back(names[p.track_event().track_uuid()], p.timestamp(),
                         p.track_event().double_counter_value());
    return out;
  }
};

model::NetSnapshot Snapshot(uint64_t ts, uint64_t rx_packets, uint64_t drops) {
  model::NetSnapshot s;
  s.ts = ts;
  model::DeviceQueueCount c;
  c.dev = kEth0;
  c.dir = model::NetDirection::kRx;
  c.queue = 0;
  c.cpu = 1;
  c.packets = rx_packets;
  c.bytes = rx_packets * 100;
  s.devices.push_back(c);
  if (drops) {
    model::DropCount d;
    d.dev = kEth0;
    d.reason = 6;
    d.location = 0xffffffff81000000ull;
    d.cpu = 1;
    d.packets = drops;
    s.drops.push_back(d);
  }
  return s;
}

bool IsIdentity(const TracePacket& p) {
  return p.track_event().categories_size() > 0 && p.track_event().categories(0) == model::kTrackIdentityCategory;
}

model::NetNames Names() {
  model::NetNames n;
  n.own_netns = 100;
  n.devices[kEth0] = "eth0";
  n.drop_reasons[6] = "SOCKET_RCVBUFF";
  n.drop_locations[0xffffffff81000000ull] = "udp_queue_rcv_one_skb";
  return n;
}

TEST(NetTracks, RateSamplesSitAtTheIntervalStartAndIntegrateToTheCount) {
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  auto names = Names();
  auto s0 = Snapshot(1'000'000'000, 0, 0);
  auto s1 = Snapshot(1'100'000'000, 1000, 0);   // 1000 packets in 0.1 s
  auto s2 = Snapshot(1'300'000'000, 1000, 40);  // idle, 40 drops in 0.2 s
  ASSERT_TRUE(net.WriteRates(s0, s1, names).ok());
  ASSERT_TRUE(net.WriteRates(s1, s2, names).ok());
  ASSERT_TRUE(net.CloseRates(s2.ts).ok());
  double rx_total = 0, drops_total = 0;
  std::map<std::string, std::vector<std::pair<uint64_t, double>>> by_track;
  for (const auto& [name, ts, v] : cap.Samples()) by_track[name].emplace_back(ts, v);
  ASSERT_TRUE(by_track.count("eth0 rx packets/s"));
  const auto& rx = by_track["eth0 rx packets/s"];
  ASSERT_EQ(rx.size(), 3u);
  EXPECT_EQ(rx[0].first, 1'000'000'000u);
  EXPECT_DOUBLE_EQ(rx[0].second, 10000);
  for (size_t i = 0; i + 1 < rx.size(); ++i)
    rx_total += rx[i].second * static_cast<double>(rx[i + 1].first - rx[i].first) / 1e9;
  EXPECT_NEAR(rx_total, 1000, 1e-6);
  const auto& drops = by_track["eth0 drops/s SOCKET_RCVBUFF"];
  ASSERT_EQ(drops.size(), 2u);  // appears with its first non-zero interval
  for (size_t i = 0; i + 1 < drops.size(); ++i)
    drops_total += drops[i].second * static_cast<double>(drops[i + 1].first - drops[i].first) / 1e9;
  EXPECT_NEAR(drops_total, 40, 1e-6);
  EXPECT_TRUE(by_track.count("eth0 cpu1 rx packets/s"));
  EXPECT_FALSE(by_track.count("eth0 tx packets/s"));  // never non-zero: no track
}

TEST(NetTracks, CounterTracksHangUnderTheirDeviceUnderNetwork) {
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  ASSERT_TRUE(net.WriteRates(Snapshot(1, 0, 0), Snapshot(2, 5, 0), Names()).ok());
  std::map<std::string, const TrackDescriptor*> by_name;
  for (const auto& p : cap.packets)
    if (p.has_track_descriptor()) by_name[p.track_descriptor().name()] = &p.track_descriptor();
  ASSERT_TRUE(by_name.count("Network"));
  ASSERT_TRUE(by_name.count("eth0"));
  ASSERT_TRUE(by_name.count("eth0 rx packets/s"));
  EXPECT_EQ(by_name["eth0"]->parent_uuid(), by_name["Network"]->uuid());
  EXPECT_EQ(by_name["eth0 rx packets/s"]->parent_uuid(), by_name["eth0"]->uuid());
  EXPECT_TRUE(by_name["eth0 rx packets/s"]->has_counter());
}

// The report finds counters by what they count, not by their names
// (model/track_identity.h): each counter track has one identity instant, on
// the metadata track, which has its own.
TEST(NetTracks, EachCounterTrackSaysWhatItCountsAsTypedArgs) {
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  ASSERT_TRUE(net.WriteRates(Snapshot(1'000'000'000, 0, 0), Snapshot(1'100'000'000, 1000, 40), Names()).ok());
  std::map<uint64_t, std::map<std::string, std::string>> identity;  // track -> args
  uint64_t meta = 0;
  for (const auto& p : cap.packets) {
    if (!p.has_track_event() || !IsIdentity(p)) continue;
    std::map<std::string, std::string> args;
    uint64_t track = 0;
    for (const auto& a : p.track_event().debug_annotations()) {
      if (a.name() == "track_uuid") track = a.uint_value();
      args[a.name()] = a.has_string_value() ? a.string_value() : std::to_string(a.int_value());
    }
    EXPECT_FALSE(identity.count(track)) << "one identity per track";
    identity[track] = args;
    if (args["kind"] == "net_metadata") meta = p.track_event().track_uuid();
  }
  ASSERT_NE(meta, 0u);
  EXPECT_EQ(identity[meta]["kind"], "net_metadata");
  std::map<std::string, std::map<std::string, std::string>> by_name;
  for (const auto& p : cap.packets)
    if (p.has_track_descriptor() && p.track_descriptor().has_counter()) {
      ASSERT_TRUE(identity.count(p.track_descriptor().uuid())) << p.track_descriptor().name();
      by_name[p.track_descriptor().name()] = identity[p.track_descriptor().uuid()];
    }
  EXPECT_EQ(by_name["eth0 rx packets/s"]["kind"], "net_counter");
  EXPECT_EQ(by_name["eth0 rx packets/s"]["device"], "eth0");
  EXPECT_EQ(by_name["eth0 rx packets/s"]["metric"], "rx_packets_per_s");
  EXPECT_EQ(by_name["eth0 cpu1 rx packets/s"]["metric"], "cpu_rx_packets_per_s");
  EXPECT_EQ(by_name["eth0 cpu1 rx packets/s"]["cpu"], "1");
  EXPECT_EQ(by_name["eth0 drops/s SOCKET_RCVBUFF"]["metric"], "drops_per_s");
  EXPECT_EQ(by_name["eth0 drops/s SOCKET_RCVBUFF"]["detail"], "SOCKET_RCVBUFF");
}

TEST(NetTracks, TotalsNameDeviceReasonAndLocation) {
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  ASSERT_TRUE(net.WriteTotals(Snapshot(1, 100, 0), Snapshot(9, 600, 30), Names()).ok());
  std::map<std::string, std::map<std::string, std::string>> events;
  for (const auto& p : cap.packets) {
    if (!p.has_track_event()) continue;
    auto& args = events[p.track_event().name()];
    for (const auto& a : p.track_event().debug_annotations())
      args[a.name()] = a.has_string_value() ? a.string_value()
                       : a.has_uint_value() ? std::to_string(a.uint_value())
                                            : std::to_string(a.int_value());
  }
  EXPECT_EQ(events["net device"]["device"], "eth0");
  EXPECT_EQ(events["net device"]["rx_packets"], "500");
  EXPECT_EQ(events["net device"]["drops.SOCKET_RCVBUFF"], "30");
  EXPECT_EQ(events["net queue"]["direction"], "rx");
  EXPECT_EQ(events["net queue"]["cpu"], "1");
  EXPECT_EQ(events["net drop"]["reason_name"], "SOCKET_RCVBUFF");
  EXPECT_EQ(events["net drop"]["location_symbol"], "udp_queue_rcv_one_skb");
}

TEST(NetTracks, TotalsFromTheDevicesOwnStatisticsSaySoAndHaveNoQueueOrCpuSplit) {
  auto device_wide = [](uint64_t ts, uint64_t packets) {
    model::NetSnapshot s;
    s.ts = ts;
    s.devices.push_back({kEth0, -1, model::NetDirection::kRx, model::kDeviceWideCpu, packets, packets * 100, 0});
    return s;
  };
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  ASSERT_TRUE(net.WriteRates(device_wide(1'000'000'000, 100), device_wide(2'000'000'000, 600), Names()).ok());
  ASSERT_TRUE(net.WriteTotals(device_wide(1'000'000'000, 100), device_wide(2'000'000'000, 600), Names()).ok());
  std::map<std::string, std::map<std::string, std::string>> events;
  for (const auto& p : cap.packets) {
    if (!p.has_track_event() || IsIdentity(p)) continue;
    auto& args = events[p.track_event().name()];
    for (const auto& a : p.track_event().debug_annotations())
      args[a.name()] = a.has_bool_value() ? (a.bool_value() ? "true" : "false")
                       : a.has_uint_value() ? std::to_string(a.uint_value())
                                            : a.string_value();
  }
  EXPECT_EQ(events["net device"]["rx_packets"], "500");
  EXPECT_EQ(events["net device"]["device_statistics"], "true");
  EXPECT_EQ(events.count("net queue"), 0u);
  std::set<std::string> tracks;
  for (const auto& [name, ts, value] : cap.Samples()) tracks.insert(name);
  EXPECT_TRUE(tracks.count("eth0 rx packets/s"));
  for (const auto& name : tracks) EXPECT_EQ(name.find(" cpu"), std::string::npos) << name;
}

TEST(NetTracks, IrqMapDescribesOnlyNicIrqs) {
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  model::IrqTable irqs;
  irqs[1].irq = 1;
  irqs[1].name = "i8042";
  irqs[38].irq = 38;
  irqs[38].name = "virtio2-input.0";
  irqs[38].device = "eth0";
  irqs[38].queue = 0;
  irqs[38].queue_kind = "rx";
  irqs[38].effective_affinity = {5};
  ASSERT_TRUE(net.WriteIrqMap(10, irqs).ok());
  int instants = 0;
  for (const auto& p : cap.packets) {
    if (!p.has_track_event() || IsIdentity(p)) continue;
    ++instants;
    EXPECT_EQ(p.track_event().name(), "irq");
    bool described = false;
    for (const auto& a : p.track_event().debug_annotations())
      if (a.name() == "description") described = a.string_value() == "CPU 5 handles eth0 rx queue 0 (IRQ 38)";
    EXPECT_TRUE(described);
  }
  EXPECT_EQ(instants, 1);
}

TEST(NetTracks, NicStatusSaysWhyTheCollectorIsOff) {
  Capture cap;
  TrackEventWriter writer(1, 0);
  NetTrackWriter net(writer, cap.out());
  model::CollectorReport nic;
  nic.name = "nic";
  nic.state = model::CollectorState::kDisabled;
  nic.reason = "no NIC-driver tracepoints on this node (looked in tracefs for: mlx5)";
  ASSERT_TRUE(net.WriteNicStatus(5, nic).ok());
  bool found = false;
  for (const auto& p : cap.packets)
    if (p.has_track_event() && p.track_event().name() == "nic status")
      for (const auto& a : p.track_event().debug_annotations())
        if (a.name() == "reason") found = a.string_value() == nic.reason;
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace gpunoise::perfetto
