#include "collect/netdev_qstats.h"

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <cstring>
#include <optional>
#include <string>

namespace gpunoise::collect {
namespace {

// NETDEV_A_QSTATS_* from 8 (RX_PACKETS) on, as the netdev spec names them.
constexpr const char* kStatNames[] = {
    "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_alloc_fail", "rx_hw_drops", "rx_hw_drop_overruns",
    "rx_csum_complete", "rx_csum_unnecessary", "rx_csum_none", "rx_csum_bad", "rx_hw_gro_packets",
    "rx_hw_gro_bytes", "rx_hw_gro_wire_packets", "rx_hw_gro_wire_bytes", "rx_hw_drop_ratelimits", "tx_hw_drops",
    "tx_hw_drop_errors", "tx_csum_none", "tx_needs_csum", "tx_hw_gso_packets", "tx_hw_gso_bytes",
    "tx_hw_gso_wire_packets", "tx_hw_gso_wire_bytes", "tx_hw_drop_ratelimits", "tx_stop", "tx_wake"};
static_assert(std::size(kStatNames) == netdev_uapi::kQstatsLastStat - netdev_uapi::kQstatsFirstStat + 1);

// NLA_UINT: 4 or 8 bytes (nla_put_uint).
std::optional<uint64_t> Uint(const nlattr* a) {
  uint16_t len = mnl_attr_get_payload_len(a);
  if (len == 4) return mnl_attr_get_u32(a);
  if (len == 8) {
    uint64_t v;
    std::memcpy(&v, mnl_attr_get_payload(a), 8);
    return v;
  }
  return std::nullopt;
}

}  // namespace

const char* QstatName(uint16_t attr) {
  if (attr < netdev_uapi::kQstatsFirstStat || attr > netdev_uapi::kQstatsLastStat) return "";
  return kStatNames[attr - netdev_uapi::kQstatsFirstStat];
}

Result<NetdevQstats> NetdevQstats::Open() {
  GN_ASSIGN_OR_RETURN(auto genl, EthtoolGenl::Open("netdev"));
  return NetdevQstats(std::move(genl));
}

void NetdevQstats::ParseQstatsMessage(const nlmsghdr* msg, std::map<int32_t, std::vector<model::NicCounterValue>>& out) {
  std::optional<int32_t> ifindex;
  std::optional<uint32_t> type, queue;
  std::vector<std::pair<uint16_t, uint64_t>> stats;
  auto attrs = GenlReplyAttrs(msg);
  for (uint16_t t = 1; t < attrs.size(); ++t) {
    const nlattr* a = attrs[t];
    if (!a) continue;
    auto v = Uint(a);
    if (!v) continue;
    if (t == netdev_uapi::kQstatsIfindex) ifindex = static_cast<int32_t>(*v);
    else if (t == netdev_uapi::kQstatsQueueType) type = static_cast<uint32_t>(*v);
    else if (t == netdev_uapi::kQstatsQueueId) queue = static_cast<uint32_t>(*v);
    else if (*QstatName(t)) stats.emplace_back(t, *v);
  }
  if (!ifindex || !type || !queue || (*type != netdev_uapi::kQueueTypeRx && *type != netdev_uapi::kQueueTypeTx)) return;
  const std::string dir = *type == netdev_uapi::kQueueTypeRx ? "rx" : "tx";
  for (const auto& [attr, v] : stats) {
    std::string stat = QstatName(attr);
    // The stat already says rx/tx ("rx_hw_drops"): the queue goes after it.
    std::string rest = stat.substr(3);
    out[*ifindex].push_back({"qstats." + dir + "_queue_" + std::to_string(*queue) + "_" + rest, v});
  }
}

Result<std::map<int32_t, std::vector<model::NicCounterValue>>> NetdevQstats::Read() {
  std::map<int32_t, std::vector<model::NicCounterValue>> out;
  GN_RETURN_IF_ERROR(genl_->Dump(
      netdev_uapi::kCmdQstatsGet, 1,
      [](nlmsghdr* nlh) { mnl_attr_put_u32(nlh, netdev_uapi::kQstatsScope, netdev_uapi::kScopeQueue); },
      [&](const nlmsghdr* msg) { ParseQstatsMessage(msg, out); }));
  return out;
}

}  // namespace gpunoise::collect
