// Per-queue statistics in the kernel's standard form: the "netdev"
// generic-netlink family's NETDEV_CMD_QSTATS_GET (Linux 6.9+), dumped for
// every device of this namespace with scope "queue". Drivers that implement
// it (mlx5, bnxt, gve, ice, virtio_net, ...) report rx/tx packets and bytes
// and, where they count them, rx-alloc-fail, rx-hw-drops,
// rx-hw-drop-overruns (the host did not keep up), tx-hw-drops, tx-stop/wake,
// under the same names for every vendor. The values are named
// "qstats.rx_queue_<q>_<stat>" / "qstats.tx_queue_<q>_<stat>" (the stat as
// the netdev spec names it, '-' as '_') so the counter map reads their queue.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "collect/ethtool_genl.h"
#include "common/result.h"
#include "model/nic_health.h"

struct nlmsghdr;

namespace gpunoise::collect {

class NetdevQstats {
 public:
  // Fails on kernels without the family or its qstats command.
  static Result<NetdevQstats> Open();
  // ifindex -> that device's per-queue values.
  Result<std::map<int32_t, std::vector<model::NicCounterValue>>> Read();

  // One reply message of the dump (public for tests); appends to out.
  static void ParseQstatsMessage(const nlmsghdr* msg, std::map<int32_t, std::vector<model::NicCounterValue>>& out);

 private:
  explicit NetdevQstats(std::unique_ptr<EthtoolGenl> genl) : genl_(std::move(genl)) {}
  std::unique_ptr<EthtoolGenl> genl_;
};

// The uapi values this build uses (include/uapi/linux/netdev.h; Debian 12's
// headers predate them).
namespace netdev_uapi {
inline constexpr uint8_t kCmdQstatsGet = 12;
inline constexpr uint16_t kQstatsIfindex = 1, kQstatsQueueType = 2, kQstatsQueueId = 3, kQstatsScope = 4;
inline constexpr uint32_t kScopeQueue = 1;
inline constexpr uint32_t kQueueTypeRx = 0, kQueueTypeTx = 1;
inline constexpr uint16_t kQstatsFirstStat = 8, kQstatsLastStat = 34;
}  // namespace netdev_uapi

// "rx_packets" for NETDEV_A_QSTATS_RX_PACKETS, ... "tx_wake"; empty for
// attributes this build does not know.
const char* QstatName(uint16_t attr);

}  // namespace gpunoise::collect
