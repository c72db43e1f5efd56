// What a NIC's own counters mean across drivers. Each driver names its
// `ethtool -S` counters its own way (mlx5 "rx_out_of_buffer", ixgbe
// "rx_missed_errors", gve "rx_no_buffers_posted[3]", bnxt "[3]: rx_discards"),
// and the kernel's standard groups (ETHTOOL_MSG_STATS_GET, pause statistics)
// use IEEE 802.3 names. This map sorts the ones that matter for "is the NIC
// dropping, pausing, flapping or resetting?" into a few kinds and finds the
// queue a per-queue counter belongs to, so the report and the monitor can say
// "the NIC dropped N packets because the host did not drain queue 5" for any
// of the drivers below. Counters it does not know keep their own name and
// kind kOther. Pure functions; the tests hold counter names written from the
// drivers' documentation and sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpunoise::model {

enum class NicCounterKind : uint8_t {
  kOther = 0,
  // The NIC had a packet but no host buffer to put it in: the host did not
  // drain (refill) the RX ring in time. mlx5 rx_out_of_buffer, ixgbe/igb
  // rx_missed_errors and rx_no_buffer_count, gve rx_no_buffers_posted[q].
  kRxMissed,
  // The NIC's own buffer overflowed before DMA (port congestion, PCIe or
  // host memory too slow to absorb): mlx5 rx_discards_phy, rx_fifo_errors,
  // IEEE aFramesLostDueToIntMACRcvError.
  kRxNicDiscard,
  kRxDrop,   // other receive drops the driver counts (per-queue drops, XDP drops excluded)
  kTxDrop,   // transmit drops (DMA mapping failures, link down)
  kRxError,  // FCS/CRC, symbol, length errors: link quality
  kTxError,
  kTxTimeout,  // the TX watchdog fired
  kPauseRx,    // link-level pause (802.3x) frames received: the peer asked us to stop
  kPauseTx,    // pause frames sent: we asked the peer to stop (our RX could not keep up)
  kPfcRx,      // priority flow control (802.1Qbb) frames, per priority
  kPfcTx,
  kLinkDown,       // link-down events the NIC counted
  kPcieError,      // PCIe signal integrity, stalls, buffer overflows the NIC counted
  kDmaError,       // DMA mapping failures
  kRxAllocFail,    // the driver could not allocate receive buffers (host memory)
  kReset,          // device, queue or firmware resets and recoveries
  kRateLimited,    // a cloud NIC's allowance exceeded (ENA *_allowance_exceeded)
  kRxPackets,
  kTxPackets,
  kRxBytes,
  kTxBytes,
};

// Stable lower-case names, used as metric label values and trace args:
// "rx_missed", "rx_nic_discard", "pause_tx", ...
std::string_view NicCounterKindName(NicCounterKind kind);
std::optional<NicCounterKind> NicCounterKindFromName(std::string_view name);
// Kinds that are packets lost by the NIC or its driver.
bool IsNicDropKind(NicCounterKind kind);

struct NicCounterClass {
  NicCounterKind kind = NicCounterKind::kOther;
  int32_t queue = -1;  // the queue (or PFC priority) a per-queue counter belongs to
};

// Classifies one counter by its name as `ethtool -S` (or the standard-group
// names "eth-mac.FramesLostDueToIntMACRcvError", "pause.rx_frames") show it.
// `driver` ("mlx5_core", "ixgbe", "veth", as ETHTOOL_GDRVINFO names it) is
// used only where the same name means different things in different drivers.
NicCounterClass ClassifyNicCounter(std::string_view driver, std::string_view name);

// Values that are not counters (veth's "peer_ifindex"), never rates.
bool IsNicGaugeName(std::string_view name);

}  // namespace gpunoise::model
