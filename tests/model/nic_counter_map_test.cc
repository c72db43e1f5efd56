// The cross-driver counter map on `ethtool -S` outputs of several drivers.
// Each output is written from the counter names the driver's ethtool table
// defines (and, where it exists, its kernel documentation), in the "name:
// value" form `ethtool -S` prints; values are made up.
#include "model/nic_counter_map.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/strings.h"

namespace gpunoise::model {
namespace {

struct Classified {
  std::string name;
  NicCounterKind kind;
  int32_t queue;
};

std::vector<Classified> ClassifyOutput(std::string_view driver, std::string_view text) {
  std::vector<Classified> out;
  for (std::string_view line : Split(text, '\n')) {
    line = Trim(line);
    size_t colon = line.rfind(": ");
    if (line.empty() || colon == std::string_view::npos) continue;
    std::string name(Trim(line.substr(0, colon)));
    NicCounterClass c = ClassifyNicCounter(driver, name);
    out.push_back({name, c.kind, c.queue});
  }
  return out;
}

const Classified& Find(const std::vector<Classified>& all, std::string_view name) {
  for (const auto& c : all)
    if (c.name == name) return c;
  static const Classified missing{"(missing)", NicCounterKind::kOther, -99};
  ADD_FAILURE() << "no counter " << name;
  return missing;
}

void Expect(const std::vector<Classified>& all, std::string_view name, NicCounterKind kind, int32_t queue) {
  const Classified& c = Find(all, name);
  EXPECT_EQ(NicCounterKindName(c.kind), NicCounterKindName(kind)) << name;
  EXPECT_EQ(c.queue, queue) << name;
}

using K = NicCounterKind;

TEST(NicCounterMap, Mlx5CountersFromCountersRst) {
  auto c = ClassifyOutput("mlx5_core", R"(NIC statistics:
     rx_packets: 9911881
     rx_bytes: 13448427392
     tx_packets: 1108473
     rx_out_of_buffer: 3120
     rx_discards_phy: 77
     rx_pause_ctrl_phy: 12
     tx_pause_ctrl_phy: 4410
     rx_prio3_pause: 9
     tx_prio3_pause: 15
     rx_prio3_pause_duration: 120
     link_down_events_phy: 2
     rx_pci_signal_integrity: 1
     outbound_pci_stalled_rd: 0
     tx_queue_dropped: 0
     rx_crc_errors_phy: 0
     rx5_packets: 181234
     rx5_bytes: 245123456
     rx5_wqe_err: 0
     tx5_dropped: 3
     tx5_recover: 1
     ch5_events: 77123
     rx_prio0_bytes: 123)");
  Expect(c, "rx_out_of_buffer", K::kRxMissed, -1);
  Expect(c, "rx_discards_phy", K::kRxNicDiscard, -1);
  Expect(c, "rx_pause_ctrl_phy", K::kPauseRx, -1);
  Expect(c, "tx_pause_ctrl_phy", K::kPauseTx, -1);
  Expect(c, "rx_prio3_pause", K::kPfcRx, 3);
  Expect(c, "tx_prio3_pause", K::kPfcTx, 3);
  Expect(c, "rx_prio3_pause_duration", K::kOther, -1);
  Expect(c, "link_down_events_phy", K::kLinkDown, -1);
  Expect(c, "rx_pci_signal_integrity", K::kPcieError, -1);
  Expect(c, "outbound_pci_stalled_rd", K::kPcieError, -1);
  Expect(c, "rx5_packets", K::kRxPackets, 5);
  Expect(c, "rx5_bytes", K::kRxBytes, 5);
  Expect(c, "rx5_wqe_err", K::kRxError, 5);
  Expect(c, "tx5_dropped", K::kTxDrop, 5);
  Expect(c, "tx5_recover", K::kReset, 5);
  Expect(c, "ch5_events", K::kOther, -1);
  Expect(c, "rx_prio0_bytes", K::kOther, -1);
}

TEST(NicCounterMap, IceCountersWithPortSuffix) {
  auto c = ClassifyOutput("ice", R"(NIC statistics:
     rx_unicast: 1827
     tx_timeout: 0
     rx_alloc_fail: 2
     rx_pg_alloc_fail: 0
     tx_queue_0_packets: 90
     tx_queue_0_bytes: 9000
     rx_queue_5_packets: 1811
     rx_queue_5_bytes: 181100
     rx_dropped.nic: 4411
     tx_timeout.nic: 1
     link_xon_rx.nic: 0
     link_xoff_rx.nic: 7
     link_xoff_tx.nic: 312
     tx_dropped_link_down.nic: 5
     rx_crc_errors.nic: 0
     tx_priority_3_xoff.nic: 40
     rx_priority_3_xon.nic: 2)");
  Expect(c, "rx_alloc_fail", K::kRxAllocFail, -1);
  Expect(c, "tx_queue_0_packets", K::kTxPackets, 0);
  Expect(c, "rx_queue_5_bytes", K::kRxBytes, 5);
  Expect(c, "rx_dropped.nic", K::kRxMissed, -1);
  Expect(c, "tx_timeout.nic", K::kTxTimeout, -1);
  Expect(c, "link_xoff_rx.nic", K::kPauseRx, -1);
  Expect(c, "link_xoff_tx.nic", K::kPauseTx, -1);
  Expect(c, "tx_dropped_link_down.nic", K::kTxDrop, -1);
  Expect(c, "tx_priority_3_xoff.nic", K::kPfcTx, 3);
  Expect(c, "rx_priority_3_xon.nic", K::kPfcRx, 3);
  Expect(c, "rx_unicast", K::kOther, -1);
}

TEST(NicCounterMap, I40eQueuesAndPortCounters) {
  auto c = ClassifyOutput("i40e", R"(NIC statistics:
     rx_packets: 100
     tx-3.tx_packets: 5
     rx-3.rx_packets: 7
     tx-3.packets: 5
     rx-3.bytes: 700
     port.rx_dropped: 13
     port.tx_timeout: 1
     port.link_xoff_tx: 99
     port.priority_2_xoff_rx: 4)");
  Expect(c, "rx-3.bytes", K::kRxBytes, 3);
  Expect(c, "tx-3.packets", K::kTxPackets, 3);
  Expect(c, "port.rx_dropped", K::kRxMissed, -1);
  Expect(c, "port.tx_timeout", K::kTxTimeout, -1);
  Expect(c, "port.link_xoff_tx", K::kPauseTx, -1);
  Expect(c, "port.priority_2_xoff_rx", K::kPfcRx, 2);
}

TEST(NicCounterMap, BnxtRingCountersInBrackets) {
  auto c = ClassifyOutput("bnxt_en", R"(NIC statistics:
     [0]: rx_ucast_packets: 12345
     [0]: rx_discards: 0
     [3]: rx_discards: 812
     [3]: rx_errors: 0
     [3]: rx_buf_errors: 1
     [3]: rx_oom_discards: 2
     [3]: tx_resets: 1
     rx_total_ring_discards: 812
     rx_total_discard_pkts: 4
     rx_pause_frames: 3
     tx_pause_frames: 600
     rx_pfc_frames: 0
     link_down_events: 1
     rx_fcs_err_frames: 0)");
  Expect(c, "[0]: rx_ucast_packets", K::kRxPackets, 0);
  Expect(c, "[3]: rx_discards", K::kRxMissed, 3);
  Expect(c, "[3]: rx_buf_errors", K::kRxDrop, 3);
  Expect(c, "[3]: rx_oom_discards", K::kRxAllocFail, 3);
  Expect(c, "[3]: tx_resets", K::kReset, 3);
  Expect(c, "rx_total_ring_discards", K::kRxMissed, -1);
  Expect(c, "rx_total_discard_pkts", K::kRxNicDiscard, -1);
  Expect(c, "tx_pause_frames", K::kPauseTx, -1);
  Expect(c, "link_down_events", K::kLinkDown, -1);
  Expect(c, "rx_fcs_err_frames", K::kRxError, -1);
}

TEST(NicCounterMap, EnaQueuesAndAllowances) {
  auto c = ClassifyOutput("ena", R"(NIC statistics:
     tx_timeout: 0
     suspend: 0
     wd_expired: 1
     interface_up: 1
     interface_down: 1
     bw_in_allowance_exceeded: 5123
     bw_out_allowance_exceeded: 0
     pps_allowance_exceeded: 77
     conntrack_allowance_exceeded: 0
     queue_0_tx_cnt: 4411
     queue_0_tx_bytes: 441100
     queue_3_rx_cnt: 9000
     queue_3_rx_bytes: 900000
     queue_3_rx_empty_rx_ring: 12
     queue_3_rx_page_alloc_fail: 1
     queue_3_rx_dma_mapping_err: 0
     queue_3_rx_xdp_drop: 0)");
  Expect(c, "wd_expired", K::kReset, -1);
  Expect(c, "interface_down", K::kLinkDown, -1);
  Expect(c, "bw_in_allowance_exceeded", K::kRateLimited, -1);
  Expect(c, "pps_allowance_exceeded", K::kRateLimited, -1);
  Expect(c, "queue_0_tx_cnt", K::kTxPackets, 0);
  Expect(c, "queue_3_rx_bytes", K::kRxBytes, 3);
  Expect(c, "queue_3_rx_empty_rx_ring", K::kRxMissed, 3);
  Expect(c, "queue_3_rx_page_alloc_fail", K::kRxAllocFail, 3);
  Expect(c, "queue_3_rx_dma_mapping_err", K::kDmaError, 3);
  Expect(c, "queue_3_rx_xdp_drop", K::kOther, 3);
  Expect(c, "suspend", K::kOther, -1);
}

TEST(NicCounterMap, GveQueueIndexInBrackets) {
  auto c = ClassifyOutput("gve", R"(NIC statistics:
     rx_packets: 1000
     tx_timeouts: 1
     rx_skb_alloc_fail: 0
     dma_mapping_error: 0
     reset_cnt: 1
     interface_down_cnt: 0
     rx_posted_desc[2]: 1024
     rx_no_buffers_posted[2]: 57
     rx_dropped_pkt[2]: 3
     rx_queue_drop_cnt[2]: 1
     tx_dma_mapping_error[1]: 2
     tx_bytes[1]: 4000)");
  Expect(c, "tx_timeouts", K::kTxTimeout, -1);
  Expect(c, "reset_cnt", K::kReset, -1);
  Expect(c, "rx_no_buffers_posted[2]", K::kRxMissed, 2);
  Expect(c, "rx_dropped_pkt[2]", K::kRxDrop, 2);
  Expect(c, "rx_queue_drop_cnt[2]", K::kRxDrop, 2);
  Expect(c, "tx_dma_mapping_error[1]", K::kDmaError, 1);
  Expect(c, "tx_bytes[1]", K::kTxBytes, 1);
  Expect(c, "rx_posted_desc[2]", K::kOther, 2);
}

TEST(NicCounterMap, IxgbeAndIgbIntelLegacyNames) {
  auto c = ClassifyOutput("ixgbe", R"(NIC statistics:
     rx_missed_errors: 123
     rx_no_buffer_count: 4
     rx_no_dma_resources: 9
     rx_fifo_errors: 0
     tx_timeout_count: 1
     rx_flow_control_xoff: 3
     tx_flow_control_xoff: 8
     alloc_rx_buff_failed: 0
     tx_queue_7_packets: 11
     rx_queue_7_bytes: 1100
     rx_pb_4_pxoff: 6
     tx_pb_4_pxon: 1)");
  Expect(c, "rx_missed_errors", K::kRxMissed, -1);
  Expect(c, "rx_no_buffer_count", K::kRxMissed, -1);
  Expect(c, "rx_no_dma_resources", K::kRxMissed, -1);
  Expect(c, "rx_fifo_errors", K::kRxNicDiscard, -1);
  Expect(c, "tx_timeout_count", K::kTxTimeout, -1);
  Expect(c, "rx_flow_control_xoff", K::kPauseRx, -1);
  Expect(c, "tx_flow_control_xoff", K::kPauseTx, -1);
  Expect(c, "alloc_rx_buff_failed", K::kRxAllocFail, -1);
  Expect(c, "tx_queue_7_packets", K::kTxPackets, 7);
  Expect(c, "rx_queue_7_bytes", K::kRxBytes, 7);
  Expect(c, "rx_pb_4_pxoff", K::kPfcRx, 4);
  Expect(c, "tx_pb_4_pxon", K::kPfcTx, 4);
  auto igb = ClassifyOutput("igb", R"(rx_queue_1_drops: 5
     rx_queue_1_alloc_failed: 1
     tx_queue_1_restart: 0)");
  Expect(igb, "rx_queue_1_drops", K::kRxDrop, 1);
  Expect(igb, "rx_queue_1_alloc_failed", K::kRxAllocFail, 1);
  Expect(igb, "tx_queue_1_restart", K::kOther, 1);
}

// As this machine's virtio_net and veth print them (ethtool 6.1, Linux 6.18).
TEST(NicCounterMap, VirtioAndVethAsThisMachinePrintsThem) {
  auto v = ClassifyOutput("virtio_net", R"(NIC statistics:
     rx_drops: 0
     rx_xdp_packets: 0
     rx_kicks: 1700
     tx_tx_timeouts: 0
     rx0_drops: 0
     rx0_xdp_drops: 0
     rx0_kicks: 1700
     tx0_tx_timeouts: 0)");
  Expect(v, "rx_drops", K::kRxDrop, -1);
  Expect(v, "rx0_drops", K::kRxDrop, 0);
  Expect(v, "tx0_tx_timeouts", K::kTxTimeout, 0);
  Expect(v, "tx_tx_timeouts", K::kTxTimeout, -1);
  Expect(v, "rx0_xdp_drops", K::kOther, 0);
  Expect(v, "rx_xdp_packets", K::kOther, -1);
  auto veth = ClassifyOutput("veth", R"(NIC statistics:
     peer_ifindex: 5
     rx_queue_0_xdp_packets: 10
     rx_queue_0_xdp_bytes: 600
     rx_queue_0_drops: 0
     rx_queue_0_xdp_drops: 0
     tx_queue_0_xdp_xmit: 0)");
  Expect(veth, "peer_ifindex", K::kOther, -1);
  EXPECT_TRUE(IsNicGaugeName("peer_ifindex"));
  Expect(veth, "rx_queue_0_xdp_packets", K::kRxPackets, 0);
  Expect(veth, "rx_queue_0_drops", K::kRxDrop, 0);
  Expect(veth, "rx_queue_0_xdp_drops", K::kOther, 0);
}

TEST(NicCounterMap, StandardGroupNames) {
  EXPECT_EQ(ClassifyNicCounter("any", "eth-mac.FramesLostDueToIntMACRcvError").kind, K::kRxNicDiscard);
  EXPECT_EQ(ClassifyNicCounter("any", "eth-mac.FrameCheckSequenceErrors").kind, K::kRxError);
  EXPECT_EQ(ClassifyNicCounter("any", "pause.rx_frames").kind, K::kPauseRx);
  EXPECT_EQ(ClassifyNicCounter("any", "pause.tx_frames").kind, K::kPauseTx);
  EXPECT_EQ(ClassifyNicCounter("any", "rmon.etherStatsJabbers").kind, K::kOther);
}

TEST(NicCounterMap, KindNamesRoundTripAndDropKinds) {
  for (int k = 0; k <= static_cast<int>(K::kTxBytes); ++k) {
    auto kind = static_cast<K>(k);
    auto back = NicCounterKindFromName(NicCounterKindName(kind));
    ASSERT_TRUE(back.has_value()) << k;
    EXPECT_EQ(*back, kind);
  }
  EXPECT_TRUE(IsNicDropKind(K::kRxMissed));
  EXPECT_TRUE(IsNicDropKind(K::kRxDrop));
  EXPECT_FALSE(IsNicDropKind(K::kPauseTx));
  EXPECT_FALSE(IsNicDropKind(K::kRxPackets));
}

}  // namespace
}  // namespace gpunoise::model
