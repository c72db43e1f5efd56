// Network-stack and NIC events as the report reads them from a trace. They
// are kept apart from model::Event's Payload (which record/export encode
// into ftrace bundles one by one) because they arrive in several forms:
// Perfetto's native ftrace messages (netif_receive_skb, net_dev_xmit,
// napi_gro_receive_entry, kfree_skb, tcp_retransmit_skb), generic ftrace
// events for tracepoints Perfetto has no message for (napi_poll,
// net_dev_xmit_timeout, dql_stall_detected, kfree_skb with its reason), and
// track-event counters.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpunoise::model {

enum class NetEventKind : uint8_t {
  kNapiPoll,     // value = work done, budget = budget
  kRxPacket,     // netif_receive_skb / napi_gro_receive_entry; value = length
  kTxPacket,     // net_dev_xmit; value = length, budget = return code
  kTxTimeout,    // net_dev_xmit_timeout: the TX watchdog fired
  kDqlStall,     // dql_stall_detected
  kDrop,         // kfree_skb; reason
  kRetransmit,   // tcp_retransmit_skb
};
std::string_view NetEventKindName(NetEventKind kind);

struct NetEvent {
  uint64_t ts = 0;
  uint32_t cpu = 0;
  int32_t tid = 0;
  NetEventKind kind = NetEventKind::kRxPacket;
  // Strings point into the trace being read: valid during the callback only.
  std::string_view device;  // "eth0"; empty when the event does not say
  std::string_view reason;  // drop reason name ("SOCKET_RCVBUFF"), or empty
  int32_t queue = -1;       // NIC queue, -1 when unknown
  int64_t value = 0;
  int64_t budget = 0;
};

}  // namespace gpunoise::model
