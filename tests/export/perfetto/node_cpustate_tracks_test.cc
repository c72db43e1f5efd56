// The node writer's cpustate records decoded with libprotobuf: an idle
// period as its state at entry and -1 at exit on "cpu<N> idle state" under
// the Node root, frequency samples in kHz, NUMA events and metadata
// instants with typed args, each counter's identity, and the size of a
// counter sample.
#include <gtest/gtest.h>

#include <map>

#include "export/perfetto/node_tracks.h"
#include "export/perfetto/sequence_ids.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/track_event_writer.h"
#include "export/perfetto/parsed_packet.h"
#include "model/track_identity.h"

namespace gpunoise::perfetto {
namespace {

struct Capture {
  std::vector<TracePacket> packets;
  std::vector<size_t> sizes;
  NodeTrackWriter::PacketOut out() {
    return [this](const TracePacketBuilder& p) {
      packets.push_back(Parsed(p));
      sizes.push_back(p.bytes().size());
      return OkStatus();
    };
  }
  std::map<uint64_t, TrackDescriptor> Tracks() const {
    std::map<uint64_t, TrackDescriptor> t;
    for (const auto& p : packets)
      if (p.has_track_descriptor()) t[p.track_descriptor().uuid()] = p.track_descriptor();
    return t;
  }
};

std::map<std::string, int64_t> IntArgs(const TracePacket& p) {
  std::map<std::string, int64_t> args;
  for (const auto& a : p.track_event().debug_annotations())
    args[a.name()] = a.has_uint_value() ? static_cast<int64_t>(a.uint_value()) : a.int_value();
  return args;
}

// The counter samples of `c`, by track name: (timestamp, value).
std::vector<std::tuple<std::string, uint64_t, double>> CounterSamples(const Capture& c) {
  auto tracks = c.Tracks();
  std::vector<std::tuple<std::string, uint64_t, double>> samples;
  std::map<uint32_t, uint64_t> default_track;  // by sequence
  for (const auto& p : c.packets) {
    if (p.has_trace_packet_defaults())
      default_track[p.trusted_packet_sequence_id()] = p.trace_packet_defaults().track_event_defaults().track_uuid();
    if (p.has_track_event() && p.track_event().type() == TrackEvent::TYPE_COUNTER) {
      const auto& e = p.track_event();
      uint64_t track = e.has_track_uuid() ? e.track_uuid() : default_track[p.trusted_packet_sequence_id()];
      samples.emplace_back(tracks[track].name(), p.timestamp(), e.double_counter_value());
    }
  }
  return samples;
}

// A sample that did not read /proc/stat (record/node_recording.h
// NextProcStatGapNs) carries the last reading: no steal sample of its own,
// and the next reading's share spans both, from the reading before.
TEST(NodeTracks, StealIsTheShareBetweenTwoReadingsOfProcStatNotBetweenSamples) {
  Capture c;
  TrackEventWriter writer(7, 1);
  NodeTrackWriter node(writer, c.out());
  constexpr uint64_t kMs = 1'000'000;
  auto reading = [](uint64_t ts, uint64_t steal) {
    model::NodeSnapshot s;
    s.ts = ts;
    s.steal_ns[1] = steal;
    return s;
  };
  model::NodeSnapshot base = reading(1000 * kMs, 0);
  model::NodeSnapshot carried = base;  // 100 ms later, /proc/stat not read
  carried.ts = 1100 * kMs;
  carried.steal_ts = 1000 * kMs;
  model::NodeSnapshot read = reading(1200 * kMs, 50 * kMs);  // 50 ms stolen in 200 ms
  ASSERT_TRUE(node.WriteSample(base, base, carried).ok());
  EXPECT_TRUE(CounterSamples(c).empty()) << "nothing new was read";
  ASSERT_TRUE(node.WriteSample(base, carried, read).ok());
  std::vector<std::tuple<std::string, uint64_t, double>> want = {{"cpu1 steal", 1000 * kMs, 0.25}};
  EXPECT_EQ(CounterSamples(c), want);
}

TEST(NodeCpustateTracks, AnIdlePeriodIsItsStateFromEntryToExitOnTheCpusCounterUnderNode) {
  Capture c;
  TrackEventWriter writer(7, 1);
  NodeTrackWriter node(writer, c.out());
  ASSERT_TRUE(node.WriteIdle({1000, 5000, 2, 3, model::CpuStateKind::kIdle}).ok());
  ASSERT_TRUE(node.WriteIdle({6000, 6500, 1, 3, model::CpuStateKind::kIdle}).ok());
  ASSERT_TRUE(node.WriteFrequency(7000, 3, 2400000).ok());
  auto tracks = c.Tracks();
  auto samples = CounterSamples(c);
  std::vector<std::tuple<std::string, uint64_t, double>> want = {
      {"cpu3 idle state", 1000, 2}, {"cpu3 idle state", 5000, -1}, {"cpu3 idle state", 6000, 1},
      {"cpu3 idle state", 6500, -1}, {"cpu3 frequency", 7000, 2400000}};
  EXPECT_EQ(samples, want);
  // The idle samples are on the CPU's own sequence, whose defaults carry the
  // track: the uuid is in none of them.
  int idle_samples = 0;
  for (const auto& p : c.packets)
    if (p.has_track_event() && p.trusted_packet_sequence_id() == CpuIdleSequenceId(3)) {
      ++idle_samples;
      EXPECT_FALSE(p.track_event().has_track_uuid());
    }
  EXPECT_EQ(idle_samples, 4);
  // Each counter track says what it counts in an identity instant on the
  // node metadata track (model/track_identity.h), which the report reads.
  std::map<std::string, std::pair<std::string, int64_t>> identities;  // track name -> metric, cpu
  for (const auto& p : c.packets)
    if (p.has_track_event() && p.track_event().categories_size() > 0 &&
        p.track_event().categories(0) == model::kTrackIdentityCategory) {
      std::string metric;
      for (const auto& a : p.track_event().debug_annotations())
        if (a.name() == "metric") metric = a.string_value();
      auto args = IntArgs(p);
      identities[tracks[static_cast<uint64_t>(args["track_uuid"])].name()] = {metric, args["cpu"]};
    }
  EXPECT_EQ(identities["cpu3 idle state"], std::make_pair(std::string("cpu_idle_state"), int64_t{3}));
  EXPECT_EQ(identities["cpu3 frequency"], std::make_pair(std::string("cpu_frequency_khz"), int64_t{3}));
  for (const auto& [uuid, t] : tracks) {
    if (t.name() == "Node" || t.name() == kNodeMetadataTrackName) continue;
    EXPECT_TRUE(t.has_counter()) << t.name();
    EXPECT_EQ(tracks[t.parent_uuid()].name(), "Node") << t.name();
  }
  // The last packet is a counter sample alone: what each idle entry and exit costs before compression.
  std::printf("counter sample packet: %zu bytes\n", c.sizes.back());
  EXPECT_LE(c.sizes.back(), 40u);
}

TEST(NodeCpustateTracks, NumaEventsAndMetadataAreInstantsWithTypedArgs) {
  Capture c;
  TrackEventWriter writer(7, 1);
  NodeTrackWriter node(writer, c.out());
  model::NumaEvent swap;
  swap.ts = 10;
  swap.kind = model::NumaEventKind::kSwap;
  swap.tid = 41;
  swap.other_tid = 42;
  swap.src_cpu = 1;
  swap.dst_cpu = 9;
  swap.src_nid = 0;
  swap.dst_nid = 1;
  ASSERT_TRUE(node.WriteNuma(swap).ok());
  ASSERT_TRUE(node.WriteNodeInstant(20, kSmiCountEventName, {{"cpu", 2}, {"start", 5}, {"end", 7}}).ok());
  ASSERT_TRUE(node.WriteNodeInstant(30, kCpuStateInfoEventName, {{"smi", 0}, {"smi_unavailable", 0, "no msr"}}).ok());
  std::map<std::string, const TracePacket*> by_name;
  for (const auto& p : c.packets)
    if (p.has_track_event() && p.track_event().type() == TrackEvent::TYPE_INSTANT) by_name[p.track_event().name()] = &p;
  ASSERT_TRUE(by_name.count("numa swap"));
  auto args = IntArgs(*by_name["numa swap"]);
  EXPECT_EQ(args["tid"], 41);
  EXPECT_EQ(args["other_tid"], 42);
  EXPECT_EQ(args["dst_cpu"], 9);
  EXPECT_EQ(args["dst_nid"], 1);
  ASSERT_TRUE(by_name.count("smi count"));
  EXPECT_EQ(IntArgs(*by_name["smi count"])["end"], 7);
  ASSERT_TRUE(by_name.count("cpustate"));
  bool text = false;
  for (const auto& a : by_name["cpustate"]->track_event().debug_annotations())
    if (a.name() == "smi_unavailable") text = a.string_value() == "no msr";
  EXPECT_TRUE(text);
  auto tracks = c.Tracks();
  EXPECT_EQ(tracks[by_name["numa swap"]->track_event().track_uuid()].name(), "gpunoise node");
}

}  // namespace
}  // namespace gpunoise::perfetto
