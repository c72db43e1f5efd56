// Network events as the report reads them back from a trace, whatever form
// they were stored in: Perfetto's native ftrace messages (netif_receive_skb,
// net_dev_xmit, napi_gro_receive_entry, kfree_skb, tcp_retransmit_skb) or
// generic ftrace events for tracepoints Perfetto has no message for
// (napi_poll, net_dev_xmit_timeout, dql_stall_detected), as gpunoise's
// network collectors and Perfetto's recorder write them. One flat record,
// so a reader can hand them on without knowing every producer's types.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpunoise::model {

enum class NetTraceKind : uint8_t {
  kNapiPoll,     // value = work done, budget = budget
  kRxPacket,     // netif_receive_skb / napi_gro_receive_entry; value = length
  kTxPacket,     // net_dev_xmit; value = length, budget = return code
  kTxTimeout,    // net_dev_xmit_timeout: the TX watchdog fired
  kDqlStall,     // dql_stall_detected
  kDrop,         // kfree_skb; reason when the producer gives one
  kRetransmit,   // tcp_retransmit_skb
};

inline std::string_view NetTraceKindName(NetTraceKind kind) {
  switch (kind) {
    case NetTraceKind::kNapiPoll: return "napi_poll";
    case NetTraceKind::kRxPacket: return "rx_packet";
    case NetTraceKind::kTxPacket: return "tx_packet";
    case NetTraceKind::kTxTimeout: return "tx_timeout";
    case NetTraceKind::kDqlStall: return "dql_stall";
    case NetTraceKind::kDrop: return "drop";
    case NetTraceKind::kRetransmit: return "tcp_retransmit";
  }
  return "?";
}

struct NetTraceEvent {
  uint64_t ts = 0;
  uint32_t cpu = 0;
  int32_t tid = 0;
  NetTraceKind kind = NetTraceKind::kRxPacket;
  // Strings point into the trace being read: valid during the callback only.
  std::string_view device;  // "eth0"; empty when the event does not say
  std::string_view reason;  // drop reason name ("SOCKET_RCVBUFF"), or empty
  int32_t queue = -1;       // NIC queue, -1 when unknown
  int64_t value = 0;
  int64_t budget = 0;
};

}  // namespace gpunoise::model
