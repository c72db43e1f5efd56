#include "model/net_events.h"

namespace gpunoise::model {

std::string_view NetEventKindName(NetEventKind kind) {
  switch (kind) {
    case NetEventKind::kNapiPoll: return "napi_poll";
    case NetEventKind::kRxPacket: return "rx_packet";
    case NetEventKind::kTxPacket: return "tx_packet";
    case NetEventKind::kTxTimeout: return "tx_timeout";
    case NetEventKind::kDqlStall: return "dql_stall";
    case NetEventKind::kDrop: return "drop";
    case NetEventKind::kRetransmit: return "tcp_retransmit";
  }
  return "?";
}

}  // namespace gpunoise::model
