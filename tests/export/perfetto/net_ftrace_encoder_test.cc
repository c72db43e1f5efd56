// Network events in Perfetto's own ftrace messages where it has them, and
// GenericFtraceEvent where it has not.
#include <gtest/gtest.h>

#include "export/perfetto/event_at.h"
#include "export/perfetto/ftrace_bundle_encoder.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {
namespace {

class NoIrqNames : public IrqNameSource {
 public:
  std::string_view IrqName(int32_t) override { return "irq?"; }
};

model::Event At(uint64_t ts, model::Payload p) { return gpunoise::testing::EventAt(ts, std::move(p), 2, 0); }

model::NetDevice Dev(const char* name) { return model::NetDevice{4026531840u, 2, model::NetDevName(name)}; }

std::map<std::string, std::string> GenericFields(const FtraceEvent& e) {
  std::map<std::string, std::string> out;
  for (const auto& f : e.generic().field()) {
    if (f.has_str_value()) out[f.name()] = f.str_value();
    else if (f.has_int_value()) out[f.name()] = std::to_string(f.int_value());
    else out[f.name()] = std::to_string(f.uint_value());
  }
  return out;
}

TEST(NetFtraceEncoder, UsesPerfettosNetMessagesWhereTheyExist) {
  std::vector<model::Event> events;
  events.push_back(At(10, model::GroReceiveEntry{Dev("eth0"), 0xabc, 8193, 60, 0, 1}));
  events.push_back(At(11, model::GroReceiveExit{0}));
  events.push_back(At(12, model::NetReceive{Dev("eth0"), 0xabc, 46, 0, 1}));
  events.push_back(At(13, model::NetTransmit{Dev("eth1"), 0xdef, 60, 0, 2, 1}));
  events.push_back(At(14, model::SkbDrop{Dev("eth0"), 0xabc, 0xffffffff81000010ull, 6, 0x0800}));
  model::TcpRetransmit rt;
  rt.sport = 40000;
  rt.dport = 5201;
  rt.state = 1;
  rt.saddr = {10, 0, 0, 1};
  events.push_back(At(15, rt));
  FtraceBundleEncoder encoder;
  NoIrqNames irqs;
  TracePacket packet;
  encoder.Encode({2, false, 0}, events, irqs, &packet);
  const auto& b = packet.ftrace_events();
  ASSERT_EQ(b.event_size(), 6);
  EXPECT_EQ(b.event(0).napi_gro_receive_entry().name(), "eth0");
  EXPECT_EQ(b.event(0).napi_gro_receive_entry().napi_id(), 8193u);
  EXPECT_TRUE(b.event(1).has_napi_gro_receive_exit());
  EXPECT_EQ(b.event(2).netif_receive_skb().name(), "eth0");
  EXPECT_EQ(b.event(2).netif_receive_skb().len(), 46u);
  EXPECT_EQ(b.event(3).net_dev_xmit().name(), "eth1");
  EXPECT_EQ(b.event(3).net_dev_xmit().rc(), 0);
  EXPECT_EQ(b.event(4).kfree_skb().location(), 0xffffffff81000010ull);
  EXPECT_EQ(b.event(4).kfree_skb().protocol(), 0x0800u);
  EXPECT_EQ(b.event(5).tcp_retransmit_skb().sport(), 40000u);
  EXPECT_EQ(b.event(5).tcp_retransmit_skb().saddr() & 0xff, 10u);  // first byte first
}

TEST(NetFtraceEncoder, NapiPollAndNicEventsAreGenericEventsWithNamedFields) {
  std::vector<model::Event> events;
  events.push_back(At(10, model::NapiPoll{Dev("eth0"), 8193, 3, 64, 64}));
  events.push_back(At(11, model::NicEvent{1, model::NetDevName("eth0")}));
  events.push_back(At(12, model::NetTxTimeout{Dev("eth2"), 5, model::NetDevName("mlx5_core")}));
  FtraceBundleEncoder encoder;
  encoder.set_nic_event_names({"mlx5/mlx5e_a", "mlx5/mlx5e_rx_cqe"});
  NoIrqNames irqs;
  TracePacket packet;
  encoder.Encode({2, false, 0}, events, irqs, &packet);
  const auto& b = packet.ftrace_events();
  ASSERT_EQ(b.event_size(), 3);
  EXPECT_EQ(b.event(0).generic().event_name(), "napi_poll");
  auto napi = GenericFields(b.event(0));
  EXPECT_EQ(napi["dev_name"], "eth0");
  EXPECT_EQ(napi["work"], "64");
  EXPECT_EQ(napi["budget"], "64");
  EXPECT_EQ(b.event(1).generic().event_name(), "mlx5e_rx_cqe");
  EXPECT_EQ(GenericFields(b.event(1))["category"], "mlx5");
  EXPECT_EQ(b.event(2).generic().event_name(), "net_dev_xmit_timeout");
  EXPECT_EQ(GenericFields(b.event(2))["driver"], "mlx5_core");
  EXPECT_EQ(GenericFields(b.event(2))["queue_index"], "5");
}

}  // namespace
}  // namespace gpunoise::perfetto
