#include "analyze/numa_metadata.h"

#include <gtest/gtest.h>

#include "analyze/timeline_builder.h"
#include "export/perfetto/node_tracks.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"
#include "export/perfetto/track_event_writer.h"
#include "import/trace_reader.h"
#include "export/perfetto/parsed_packet.h"

namespace gpunoise::analyze {
namespace {

// What the recorder writes (NodeTrackWriter) is what the report reads back,
// through the same reader and timeline builder `gpunoise report` uses.
TEST(NumaMetadata, TheRecordersTopologyIsReadBackAsTypedData) {
  perfetto::Trace trace;
  perfetto::TrackEventWriter writer(7, 0);
  perfetto::NodeTrackWriter node(writer, [&](const perfetto::TracePacketBuilder& p) {
    *trace.add_packet() = perfetto::Parsed(p);
    return OkStatus();
  });
  model::NumaTopology topo;
  topo.nodes = {{0, {0, 1, 2, 3}}, {1, {4, 5, 6, 7}}};
  topo.devices = {{"nic", "eth0", "0000:5e:00.0", 1}, {"gpu", "0000:3b:00.0", "0000:3b:00.0", 0}};
  ASSERT_TRUE(node.WriteNumaTopology(1000, topo).ok());
  ASSERT_TRUE(node.WriteNicIrqCpus(1000, {45, "eth0", {0, 1}, true}, "start").ok());
  ASSERT_TRUE(node.WriteNicIrqCpus(2000, {45, "eth0", {5}, true}, "end").ok());
  ASSERT_TRUE(node.WriteNicIrqCpus(1000, {46, "eth0", {4, 5, 6, 7}, false}, "start").ok());
  std::string bytes = trace.SerializeAsString();

  TimelineBuilder builder;
  import::TraceReader reader(builder);
  auto stats = reader.ReadBuffer({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  Timeline t = builder.Finish();
  NumaMetadata m = ReadNumaMetadata(t);
  ASSERT_TRUE(m.recorded);
  EXPECT_EQ(m.CpuNodes(), 2u);
  EXPECT_EQ(m.NodeOfCpu(2), 0);
  EXPECT_EQ(m.NodeOfCpu(6), 1);
  EXPECT_EQ(m.NodeOfCpu(9), -1);
  ASSERT_NE(m.Device("nic", "eth0"), nullptr);
  EXPECT_EQ(m.Device("nic", "eth0")->numa_node, 1);
  ASSERT_NE(m.DeviceByBus("0000:3b:00.0"), nullptr);
  EXPECT_EQ(m.DeviceByBus("0000:3b:00.0")->kind, "gpu");
  ASSERT_EQ(m.nic_irqs.size(), 2u);
  EXPECT_EQ(m.nic_irqs[45].start_cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(m.nic_irqs[45].end_cpus, std::vector<int>{5});
  EXPECT_TRUE(m.nic_irqs[45].effective);
  EXPECT_FALSE(m.nic_irqs[46].effective);
  EXPECT_TRUE(m.nic_irqs[46].end_cpus.empty());
  EXPECT_EQ(m.NotMeasurableReason(), "");
}

}  // namespace
}  // namespace gpunoise::analyze
