#include "model/nic_counter_map.h"

#include <array>
#include <cctype>
#include <utility>

namespace gpunoise::model {
namespace {

constexpr std::array<std::pair<NicCounterKind, std::string_view>, 22> kKindNames{{
    {NicCounterKind::kOther, "other"},
    {NicCounterKind::kRxMissed, "rx_missed"},
    {NicCounterKind::kRxNicDiscard, "rx_nic_discard"},
    {NicCounterKind::kRxDrop, "rx_drop"},
    {NicCounterKind::kTxDrop, "tx_drop"},
    {NicCounterKind::kRxError, "rx_error"},
    {NicCounterKind::kTxError, "tx_error"},
    {NicCounterKind::kTxTimeout, "tx_timeout"},
    {NicCounterKind::kPauseRx, "pause_rx"},
    {NicCounterKind::kPauseTx, "pause_tx"},
    {NicCounterKind::kPfcRx, "pfc_rx"},
    {NicCounterKind::kPfcTx, "pfc_tx"},
    {NicCounterKind::kLinkDown, "link_down"},
    {NicCounterKind::kPcieError, "pcie_error"},
    {NicCounterKind::kDmaError, "dma_error"},
    {NicCounterKind::kRxAllocFail, "rx_alloc_fail"},
    {NicCounterKind::kReset, "reset"},
    {NicCounterKind::kRateLimited, "rate_limited"},
    {NicCounterKind::kRxPackets, "rx_packets"},
    {NicCounterKind::kTxPackets, "tx_packets"},
    {NicCounterKind::kRxBytes, "rx_bytes"},
    {NicCounterKind::kTxBytes, "tx_bytes"},
}};

using K = NicCounterKind;

// Counter names after the queue part is taken out (see SplitQueue), with
// the driver they were read from. Names shared by several drivers are
// listed once. Sources: each driver's ethtool statistics tables
// (drivers/net/ethernet/mellanox/mlx5/core/en_stats.c and
// Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst;
// intel/ice/ice_ethtool.c, intel/i40e/i40e_ethtool.c,
// intel/ixgbe/ixgbe_ethtool.c, intel/igb/igb_ethtool.c;
// broadcom/bnxt/bnxt_ethtool.c; amazon/ena/ena_ethtool.c and ena.rst;
// google/gve/gve_ethtool.c and gve.rst; drivers/net/virtio_net.c;
// drivers/net/veth.c) and the kernel's standard groups (net/ethtool/stats.c,
// net/ethtool/pause.c).
struct Rule {
  std::string_view name;
  K kind;
};
constexpr Rule kExact[] = {
    // The host did not post receive buffers in time.
    {"rx_out_of_buffer", K::kRxMissed},        // mlx5
    {"rx_missed_errors", K::kRxMissed},        // ixgbe, igb, i40e, rtnl stats
    {"rx_no_buffer_count", K::kRxMissed},      // ixgbe, igb (RNBC)
    {"rx_no_dma_resources", K::kRxMissed},     // ixgbe
    {"rx_no_buffers_posted", K::kRxMissed},    // gve, per queue
    {"rx_dropped.nic", K::kRxMissed},          // ice: the port's rx_discards (no descriptor)
    {"port.rx_dropped", K::kRxMissed},         // i40e: same
    {"rx_discards", K::kRxMissed},             // bnxt, per ring: ring full
    {"rx_total_ring_discards", K::kRxMissed},  // bnxt, summed over rings
    {"rx_empty_rx_ring", K::kRxMissed},        // ena, per queue
    // The NIC's own buffers overflowed.
    {"rx_discards_phy", K::kRxNicDiscard},     // mlx5: "the adapter is congested"
    {"rx_fifo_errors", K::kRxNicDiscard},      // ixgbe, igb, rtnl stats
    {"rx_over_errors", K::kRxNicDiscard},
    {"rx_stat_discard", K::kRxNicDiscard},     // bnxt, port
    {"rx_total_discard_pkts", K::kRxNicDiscard},  // bnxt, port
    {"eth-mac.FramesLostDueToIntMACRcvError", K::kRxNicDiscard},  // IEEE 30.3.1.1.15
    {"outbound_pci_buffer_overflow", K::kPcieError},  // mlx5
    // Other receive drops.
    {"rx_drops", K::kRxDrop},              // virtio_net, ena (device level), veth per queue
    {"rx_dropped", K::kRxDrop},            // gve, ixgbe, igb (software)
    {"rx_dropped_pkt", K::kRxDrop},        // gve, per queue
    {"rx_queue_drop_cnt", K::kRxDrop},     // gve, per queue
    {"rx_oom_discards", K::kRxAllocFail},  // bnxt, per ring
    {"rx_total_oom_discards", K::kRxAllocFail},
    {"rx_buf_errors", K::kRxDrop},          // bnxt
    {"rx_total_buf_errors", K::kRxDrop},
    {"rx_drops_packet_over_mru", K::kRxDrop},  // gve
    {"rx_desc_err_dropped_pkt", K::kRxDrop},   // gve
    {"rx_wqe_err", K::kRxError},               // mlx5
    // Transmit drops and errors.
    {"tx_dropped", K::kTxDrop},           // mlx5 per queue (DMA mapping), gve, ixgbe, igb
    {"tx_queue_dropped", K::kTxDrop},     // mlx5
    {"tx_drops", K::kTxDrop},             // ena
    {"tx_dropped_link_down.nic", K::kTxDrop},  // ice
    {"port.tx_dropped_link_down", K::kTxDrop},  // i40e
    {"tx_total_ring_discards", K::kTxDrop},  // bnxt
    {"tx_errors", K::kTxError},
    {"tx_errors.nic", K::kTxError},
    {"tx_aborted_errors", K::kTxError},
    {"tx_carrier_errors", K::kTxError},
    {"tx_fifo_errors", K::kTxError},
    // Link-quality receive errors.
    {"rx_crc_errors", K::kRxError},
    {"rx_crc_errors.nic", K::kRxError},
    {"port.rx_crc_errors", K::kRxError},
    {"rx_crc_errors_phy", K::kRxError},   // mlx5
    {"rx_symbol_err_phy", K::kRxError},   // mlx5
    {"rx_fcs_err_frames", K::kRxError},   // bnxt
    {"rx_length_errors", K::kRxError},
    {"rx_frame_errors", K::kRxError},
    {"rx_errors", K::kRxError},
    {"eth-mac.FrameCheckSequenceErrors", K::kRxError},  // IEEE 30.3.1.1.6
    {"eth-mac.AlignmentErrors", K::kRxError},
    {"eth-phy.SymbolErrorDuringCarrier", K::kRxError},  // IEEE 30.3.2.1.5
    {"eth-mac.FramesLostDueToIntMACXmitError", K::kTxError},
    // TX watchdog.
    {"tx_timeout_count", K::kTxTimeout},  // ixgbe, igb
    {"tx_timeout.nic", K::kTxTimeout},    // ice
    {"port.tx_timeout", K::kTxTimeout},   // i40e
    {"tx_timeout", K::kTxTimeout},        // ena, mlx5
    {"tx_timeouts", K::kTxTimeout},       // gve, virtio_net ("tx0_tx_timeouts" -> queue 0)
    {"tx_tx_timeouts", K::kTxTimeout},    // virtio_net
    // Link-level pause.
    {"rx_pause_ctrl_phy", K::kPauseRx},  // mlx5
    {"tx_pause_ctrl_phy", K::kPauseTx},
    {"rx_flow_control_xon", K::kPauseRx},  // ixgbe, igb
    {"rx_flow_control_xoff", K::kPauseRx},
    {"tx_flow_control_xon", K::kPauseTx},
    {"tx_flow_control_xoff", K::kPauseTx},
    {"link_xon_rx.nic", K::kPauseRx},  // ice
    {"link_xoff_rx.nic", K::kPauseRx},
    {"link_xon_tx.nic", K::kPauseTx},
    {"link_xoff_tx.nic", K::kPauseTx},
    {"port.link_xon_rx", K::kPauseRx},  // i40e
    {"port.link_xoff_rx", K::kPauseRx},
    {"port.link_xon_tx", K::kPauseTx},
    {"port.link_xoff_tx", K::kPauseTx},
    {"rx_pause_frames", K::kPauseRx},  // bnxt
    {"tx_pause_frames", K::kPauseTx},
    {"pause.rx_frames", K::kPauseRx},  // ETHTOOL_A_PAUSE_STAT_RX_FRAMES
    {"pause.tx_frames", K::kPauseTx},
    {"rx_pfc_frames", K::kPfcRx},  // bnxt, all priorities
    {"tx_pfc_frames", K::kPfcTx},
    // Link, PCIe, DMA, resets.
    {"link_down_events_phy", K::kLinkDown},  // mlx5
    {"link_down_events", K::kLinkDown},      // bnxt
    {"interface_down", K::kLinkDown},        // ena
    {"interface_down_cnt", K::kLinkDown},    // gve
    {"rx_pci_signal_integrity", K::kPcieError},  // mlx5
    {"tx_pci_signal_integrity", K::kPcieError},
    {"outbound_pci_stalled_rd", K::kPcieError},
    {"outbound_pci_stalled_wr", K::kPcieError},
    {"dma_mapping_error", K::kDmaError},     // gve
    {"tx_dma_mapping_error", K::kDmaError},  // gve, per queue
    {"rx_dma_mapping_err", K::kDmaError},    // ena, per queue
    {"dma_mapping_err", K::kDmaError},       // ena
    {"alloc_rx_buff_failed", K::kRxAllocFail},  // ixgbe, igb
    {"alloc_rx_page_failed", K::kRxAllocFail},
    {"rx_alloc_fail", K::kRxAllocFail},     // ice, i40e
    {"rx_pg_alloc_fail", K::kRxAllocFail},
    {"rx_skb_alloc_fail", K::kRxAllocFail},   // gve, ena
    {"rx_buf_alloc_fail", K::kRxAllocFail},   // gve
    {"rx_page_alloc_fail", K::kRxAllocFail},  // ena
    {"page_alloc_fail", K::kRxAllocFail},     // gve
    {"rx_alloc_failed", K::kRxAllocFail},     // igb, per queue ("rx_queue_0_alloc_failed")
    {"reset_cnt", K::kReset},      // gve
    {"reset_fail", K::kReset},     // ena
    {"wd_expired", K::kReset},     // ena: keep-alive watchdog, the driver resets the device
    {"tx_recover", K::kReset},     // mlx5, per queue ("tx3_recover")
    {"rx_recover", K::kReset},
    {"tx_resets", K::kReset},      // bnxt, per ring
    {"rx_resets", K::kReset},
    {"tx_total_resets", K::kReset},
    {"rx_total_resets", K::kReset},
    // The kernel's per-queue statistics (netdev netlink qstats, read as
    // "qstats.rx_queue_<q>_..."). rx-hw-drops counts every packet the device
    // dropped, its overruns included, so only the overruns carry a kind (no
    // drop counted twice).
    {"rx_hw_drop_overruns", K::kRxMissed},
    {"rx_hw_drop_ratelimits", K::kRateLimited},
    {"tx_hw_drops", K::kTxDrop},
    {"tx_hw_drop_errors", K::kTxError},
    {"tx_hw_drop_ratelimits", K::kRateLimited},
    {"bw_in_allowance_exceeded", K::kRateLimited},  // ena
    {"bw_out_allowance_exceeded", K::kRateLimited},
    {"pps_allowance_exceeded", K::kRateLimited},
    {"conntrack_allowance_exceeded", K::kRateLimited},
    {"linklocal_allowance_exceeded", K::kRateLimited},
    // Traffic.
    {"rx_packets", K::kRxPackets},
    {"tx_packets", K::kTxPackets},
    {"rx_bytes", K::kRxBytes},
    {"tx_bytes", K::kTxBytes},
    {"rx_cnt", K::kRxPackets},  // ena, per queue
    {"tx_cnt", K::kTxPackets},
    {"rx_ucast_packets", K::kRxPackets},  // bnxt (unicast only; per ring)
    {"tx_ucast_packets", K::kTxPackets},
    {"eth-mac.FramesReceivedOK", K::kRxPackets},
    {"eth-mac.FramesTransmittedOK", K::kTxPackets},
    {"eth-mac.OctetsReceivedOK", K::kRxBytes},
    {"eth-mac.OctetsTransmittedOK", K::kTxBytes},
};

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

int32_t ToQueue(std::string_view digits) {
  int64_t v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
    if (v > 1'000'000) return -1;
  }
  return static_cast<int32_t>(v);
}

// Takes the queue part out of a per-queue counter name: the base name (with
// the direction kept, "rx_queue_3_drops" -> "rx_drops") and the queue.
struct Split {
  std::string base;
  int32_t queue = -1;
};

Split SplitQueue(std::string_view name) {
  auto digits_at = [&](size_t pos) {
    size_t end = pos;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    return end;
  };
  // "[3]: rx_discards" (bnxt)
  if (name.size() > 4 && name[0] == '[') {
    size_t end = digits_at(1);
    if (end > 1 && name.substr(end, 3) == "]: ")
      return {std::string(name.substr(end + 3)), ToQueue(name.substr(1, end - 1))};
  }
  // "rx_no_buffers_posted[3]" (gve)
  if (name.size() > 3 && name.back() == ']') {
    size_t open = name.rfind('[');
    if (open != std::string_view::npos && open > 0 && IsDigits(name.substr(open + 1, name.size() - open - 2)))
      return {std::string(name.substr(0, open)), ToQueue(name.substr(open + 1, name.size() - open - 2))};
  }
  for (std::string_view dir : {"rx", "tx"}) {
    if (name.substr(0, 2) != dir) continue;
    // "rx_queue_3_drops" (ixgbe, igb, ice, veth)
    if (name.substr(2, 7) == "_queue_") {
      size_t end = digits_at(9);
      if (end > 9 && end < name.size() && name[end] == '_')
        return {std::string(dir) + "_" + std::string(name.substr(end + 1)), ToQueue(name.substr(9, end - 9))};
    }
    // "rx-3.packets" (i40e)
    if (name.size() > 3 && name[2] == '-') {
      size_t end = digits_at(3);
      if (end > 3 && end < name.size() && name[end] == '.')
        return {std::string(dir) + "_" + std::string(name.substr(end + 1)), ToQueue(name.substr(3, end - 3))};
    }
    // "rx3_packets", "tx0_tx_timeouts" (mlx5, virtio_net)
    size_t end = digits_at(2);
    if (end > 2 && end < name.size() && name[end] == '_')
      return {std::string(dir) + "_" + std::string(name.substr(end + 1)), ToQueue(name.substr(2, end - 2))};
  }
  // "queue_3_rx_cnt" (ena)
  if (name.substr(0, 6) == "queue_") {
    size_t end = digits_at(6);
    if (end > 6 && end < name.size() && name[end] == '_')
      return {std::string(name.substr(end + 1)), ToQueue(name.substr(6, end - 6))};
  }
  return {std::string(name), -1};
}

// Per-priority flow control: mlx5 "rx_prio3_pause", ice
// "rx_priority_3_xoff.nic", ixgbe "rx_pb_3_pxoff", i40e
// "port.priority_3_xoff_rx". Durations and transitions are not frames.
std::optional<NicCounterClass> Pfc(std::string_view name) {
  if (name.find("duration") != std::string_view::npos || name.find("transition") != std::string_view::npos)
    return std::nullopt;
  auto number_after = [&](std::string_view marker) -> int32_t {
    size_t at = name.find(marker);
    if (at == std::string_view::npos) return -1;
    size_t pos = at + marker.size(), end = pos;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    return end > pos ? ToQueue(name.substr(pos, end - pos)) : -1;
  };
  bool pause_word = name.find("pause") != std::string_view::npos || name.find("xon") != std::string_view::npos ||
                    name.find("xoff") != std::string_view::npos;
  if (!pause_word) return std::nullopt;
  int32_t prio = -1;
  for (std::string_view marker : {"_prio", "priority_", "_pb_"})
    if ((prio = number_after(marker)) >= 0) break;
  if (prio < 0) return std::nullopt;
  bool rx = name.substr(0, 2) == "rx" || name.find("_rx") != std::string_view::npos;
  bool tx = name.substr(0, 2) == "tx" || name.find("_tx") != std::string_view::npos;
  if (rx == tx) return std::nullopt;
  return NicCounterClass{rx ? K::kPfcRx : K::kPfcTx, prio};
}

}  // namespace

std::string_view NicCounterKindName(NicCounterKind kind) {
  for (const auto& [k, name] : kKindNames)
    if (k == kind) return name;
  return "other";
}

std::optional<NicCounterKind> NicCounterKindFromName(std::string_view name) {
  for (const auto& [k, n] : kKindNames)
    if (n == name) return k;
  return std::nullopt;
}

bool IsNicDropKind(NicCounterKind kind) {
  switch (kind) {
    case K::kRxMissed:
    case K::kRxNicDiscard:
    case K::kRxDrop:
    case K::kTxDrop:
    case K::kRateLimited:
      return true;
    default:
      return false;
  }
}

bool IsNicGaugeName(std::string_view name) { return name == "peer_ifindex"; }

NicCounterClass ClassifyNicCounter(std::string_view driver, std::string_view name) {
  if (IsNicGaugeName(name)) return {};
  if (name.substr(0, 7) == "qstats.") name.remove_prefix(7);
  if (auto pfc = Pfc(name)) return *pfc;
  Split split = SplitQueue(name);
  // veth counts XDP-path packets per queue ("rx_queue_0_xdp_packets"); its
  // "xdp_drops" are XDP_DROP verdicts, which a program chose.
  if (driver == "veth" && split.base == "rx_xdp_packets") return {K::kRxPackets, split.queue};
  if (split.base.find("xdp") != std::string::npos) return {K::kOther, split.queue};
  for (const Rule& r : kExact)
    if (r.name == split.base) return {r.kind, split.queue};
  return {K::kOther, split.queue};
}

}  // namespace gpunoise::model
