#include "collect/ethtool_stats.h"

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace gpunoise::collect {
namespace {

std::string IoctlReason(int err) {
  switch (err) {
    case EOPNOTSUPP: return "the driver has no ethtool statistics";
    case ENODEV: return "no such interface in this network namespace";
    default: return std::strerror(err);
  }
}

// Names of the kernel's standard statistics, by group and attribute id, as
// IEEE 802.3 clause 30 (and RFC 2819 for rmon) names them; the kernel's own
// string sets (ETH_SS_STATS_ETH_*) use the same names.
struct StdName {
  uint32_t group, id;
  const char* name;
};
constexpr StdName kStandardNames[] = {
    {ETHTOOL_STATS_ETH_PHY, ETHTOOL_A_STATS_ETH_PHY_5_SYM_ERR, "SymbolErrorDuringCarrier"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_2_TX_PKT, "FramesTransmittedOK"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_3_SINGLE_COL, "SingleCollisionFrames"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_4_MULTI_COL, "MultipleCollisionFrames"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_5_RX_PKT, "FramesReceivedOK"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_6_FCS_ERR, "FrameCheckSequenceErrors"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_7_ALIGN_ERR, "AlignmentErrors"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_8_TX_BYTES, "OctetsTransmittedOK"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_9_TX_DEFER, "FramesWithDeferredXmissions"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_10_LATE_COL, "LateCollisions"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_11_XS_COL, "FramesAbortedDueToXSColls"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_12_TX_INT_ERR, "FramesLostDueToIntMACXmitError"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_13_CS_ERR, "CarrierSenseErrors"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_14_RX_BYTES, "OctetsReceivedOK"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_15_RX_INT_ERR, "FramesLostDueToIntMACRcvError"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_18_TX_MCAST, "MulticastFramesXmittedOK"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_19_TX_BCAST, "BroadcastFramesXmittedOK"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_20_XS_DEFER, "FramesWithExcessiveDeferral"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_21_RX_MCAST, "MulticastFramesReceivedOK"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_22_RX_BCAST, "BroadcastFramesReceivedOK"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_23_IR_LEN_ERR, "InRangeLengthErrors"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_24_OOR_LEN, "OutOfRangeLengthField"},
    {ETHTOOL_STATS_ETH_MAC, ETHTOOL_A_STATS_ETH_MAC_25_TOO_LONG_ERR, "FrameTooLongErrors"},
    {ETHTOOL_STATS_ETH_CTRL, ETHTOOL_A_STATS_ETH_CTRL_3_TX, "MACControlFramesTransmitted"},
    {ETHTOOL_STATS_ETH_CTRL, ETHTOOL_A_STATS_ETH_CTRL_4_RX, "MACControlFramesReceived"},
    {ETHTOOL_STATS_ETH_CTRL, ETHTOOL_A_STATS_ETH_CTRL_5_RX_UNSUP, "UnsupportedOpcodesReceived"},
    {ETHTOOL_STATS_RMON, ETHTOOL_A_STATS_RMON_UNDERSIZE, "etherStatsUndersizePkts"},
    {ETHTOOL_STATS_RMON, ETHTOOL_A_STATS_RMON_OVERSIZE, "etherStatsOversizePkts"},
    {ETHTOOL_STATS_RMON, ETHTOOL_A_STATS_RMON_FRAG, "etherStatsFragments"},
    {ETHTOOL_STATS_RMON, ETHTOOL_A_STATS_RMON_JABBER, "etherStatsJabbers"},
};

const char* GroupName(uint32_t group) {
  switch (group) {
    case ETHTOOL_STATS_ETH_PHY: return "eth-phy";
    case ETHTOOL_STATS_ETH_MAC: return "eth-mac";
    case ETHTOOL_STATS_ETH_CTRL: return "eth-ctrl";
    case ETHTOOL_STATS_RMON: return "rmon";
    default: return nullptr;
  }
}

// A u64 attribute as the kernel puts it (nla_put_u64_64bit: 8 bytes).
bool U64(const nlattr* a, uint64_t* out) {
  if (mnl_attr_get_payload_len(a) != sizeof(uint64_t)) return false;
  std::memcpy(out, mnl_attr_get_payload(a), sizeof(uint64_t));
  return true;
}

}  // namespace

std::string StandardStatName(uint32_t group, uint32_t id) {
  const char* g = GroupName(group);
  if (!g) return {};
  for (const StdName& n : kStandardNames)
    if (n.group == group && n.id == id) return std::string(g) + "." + n.name;
  return {};
}

Result<EthtoolIoctl> EthtoolIoctl::Open() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return MakeError("failed to open a socket for ethtool: {}", std::strerror(errno));
  return EthtoolIoctl(std::move(fd));
}

namespace {

int EthtoolCall(int fd, const std::string& ifname, void* data) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = static_cast<char*>(data);
  return ::ioctl(fd, SIOCETHTOOL, &ifr) == 0 ? 0 : errno;
}

}  // namespace

Result<DriverInfo> EthtoolIoctl::Info(const std::string& ifname) const {
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  if (int err = EthtoolCall(fd_.get(), ifname, &info))
    return MakeError("failed to read the driver of {}: {}", ifname, IoctlReason(err));
  DriverInfo d;
  d.driver = std::string(info.driver, strnlen(info.driver, sizeof(info.driver)));
  d.bus_info = std::string(info.bus_info, strnlen(info.bus_info, sizeof(info.bus_info)));
  d.firmware = std::string(info.fw_version, strnlen(info.fw_version, sizeof(info.fw_version)));
  return d;
}

Result<uint32_t> EthtoolIoctl::StatCount(const std::string& ifname) const {
  // ethtool_sset_info ends in a flexible array: one u32 per set asked for.
  std::vector<uint64_t> storage(sizeof(ethtool_sset_info) / 8 + 2, 0);
  auto* sset = reinterpret_cast<ethtool_sset_info*>(storage.data());
  sset->cmd = ETHTOOL_GSSET_INFO;
  sset->sset_mask = uint64_t{1} << ETH_SS_STATS;
  if (int err = EthtoolCall(fd_.get(), ifname, sset))
    return MakeError("failed to count the ethtool statistics of {}: {}", ifname, IoctlReason(err));
  if (!(sset->sset_mask & (uint64_t{1} << ETH_SS_STATS))) return uint32_t{0};
  return sset->data[0];
}

Result<std::vector<std::string>> EthtoolIoctl::StatNames(const std::string& ifname) const {
  GN_ASSIGN_OR_RETURN(uint32_t n, StatCount(ifname));
  if (n == 0) return MakeError("{} has no ethtool statistics", ifname);
  if (n > 1u << 16) return MakeError("{} reports {} ethtool statistics, too many to believe", ifname, n);
  std::vector<uint64_t> storage((sizeof(ethtool_gstrings) + size_t{n} * ETH_GSTRING_LEN + 7) / 8);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(storage.data());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = n;
  if (int err = EthtoolCall(fd_.get(), ifname, strings))
    return MakeError("failed to read the ethtool statistic names of {}: {}", ifname, IoctlReason(err));
  std::vector<std::string> names;
  names.reserve(strings->len);
  for (uint32_t i = 0; i < strings->len && i < n; ++i) {
    const char* s = reinterpret_cast<const char*>(strings->data) + size_t{i} * ETH_GSTRING_LEN;
    names.emplace_back(s, strnlen(s, ETH_GSTRING_LEN));
  }
  return names;
}

Result<std::vector<uint64_t>> EthtoolIoctl::StatValues(const std::string& ifname, size_t expected) const {
  GN_ASSIGN_OR_RETURN(uint32_t n, StatCount(ifname));
  if (n != expected)
    return MakeError("the ethtool statistics of {} changed from {} to {} counters", ifname, expected, n);
  std::vector<uint64_t> storage(sizeof(ethtool_stats) / 8 + 1 + n);
  auto* stats = reinterpret_cast<ethtool_stats*>(storage.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = n;
  if (int err = EthtoolCall(fd_.get(), ifname, stats))
    return MakeError("failed to read the ethtool statistics of {}: {}", ifname, IoctlReason(err));
  return std::vector<uint64_t>(stats->data, stats->data + std::min<uint32_t>(stats->n_stats, n));
}

EthtoolIoctl::LinkSettings EthtoolIoctl::Settings(const std::string& ifname) const {
  LinkSettings s;
  ethtool_cmd cmd{};
  cmd.cmd = ETHTOOL_GSET;
  if (EthtoolCall(fd_.get(), ifname, &cmd) != 0) return s;
  uint32_t speed = ethtool_cmd_speed(&cmd);
  s.speed_mbps = speed == static_cast<uint32_t>(SPEED_UNKNOWN) ? 0 : speed;
  if (cmd.duplex == DUPLEX_FULL) s.duplex = "full";
  else if (cmd.duplex == DUPLEX_HALF) s.duplex = "half";
  if (cmd.autoneg == AUTONEG_ENABLE) s.autoneg = "on";
  else if (cmd.autoneg == AUTONEG_DISABLE) s.autoneg = "off";
  return s;
}

void ParseStatsReply(const nlmsghdr* msg, std::vector<model::NicCounterValue>& out) {
  // Each ETHTOOL_A_STATS_GRP nest: GRP_ID, GRP_SS_ID, then one GRP_STAT nest
  // per counter holding a single u64 attribute whose type is the counter's
  // id (net/ethtool/stats.c, stat_put). mnl_attr_parse keeps only the last
  // of repeated attributes, so walk the payload.
  const char* begin = static_cast<const char*>(mnl_nlmsg_get_payload_offset(msg, sizeof(genlmsghdr)));
  const char* end = reinterpret_cast<const char*>(msg) + msg->nlmsg_len;
  for (auto* a = reinterpret_cast<const nlattr*>(begin);
       mnl_attr_ok(a, static_cast<int>(end - reinterpret_cast<const char*>(a))); a = mnl_attr_next(a)) {
    if (mnl_attr_get_type(a) != ETHTOOL_A_STATS_GRP) continue;
    std::optional<uint32_t> group;
    std::vector<std::pair<uint32_t, uint64_t>> values;
    ForEachNestedAttr(a, [&](const nlattr* g) {
      uint16_t type = mnl_attr_get_type(g);
      if (type == ETHTOOL_A_STATS_GRP_ID && mnl_attr_validate(g, MNL_TYPE_U32) >= 0) {
        group = mnl_attr_get_u32(g);
      } else if (type == ETHTOOL_A_STATS_GRP_STAT) {
        ForEachNestedAttr(g, [&](const nlattr* s) {
          uint64_t v = 0;
          if (U64(s, &v)) values.emplace_back(mnl_attr_get_type(s), v);
        });
      }
    });
    if (!group) continue;
    for (const auto& [id, v] : values) {
      std::string name = StandardStatName(*group, id);
      if (name.empty()) {
        const char* g = GroupName(*group);
        if (!g) continue;
        name = std::string(g) + ".stat" + std::to_string(id);  // a counter newer than this build
      }
      out.push_back({std::move(name), v});
    }
  }
}

void ParsePauseStatsReply(const nlmsghdr* msg, std::vector<model::NicCounterValue>& out) {
  auto attrs = GenlReplyAttrs(msg);
  const nlattr* stats = attrs[ETHTOOL_A_PAUSE_STATS];
  if (!stats) return;
  ForEachNestedAttr(stats, [&](const nlattr* s) {
    uint64_t v = 0;
    if (!U64(s, &v)) return;
    if (mnl_attr_get_type(s) == ETHTOOL_A_PAUSE_STAT_TX_FRAMES) out.push_back({"pause.tx_frames", v});
    if (mnl_attr_get_type(s) == ETHTOOL_A_PAUSE_STAT_RX_FRAMES) out.push_back({"pause.rx_frames", v});
  });
}

Result<std::vector<model::NicCounterValue>> ReadStandardStats(EthtoolGenl& genl, const std::string& ifname) {
  std::vector<model::NicCounterValue> out;
  EthtoolGenl::Reply reply;
  // All four groups, as a compact bitset without mask.
  Status stats = genl.Get(ETHTOOL_MSG_STATS_GET, ETHTOOL_A_STATS_HEADER, ifname, reply, 0, [](nlmsghdr* nlh) {
    nlattr* groups = mnl_attr_nest_start(nlh, ETHTOOL_A_STATS_GROUPS);
    mnl_attr_put(nlh, ETHTOOL_A_BITSET_NOMASK, 0, nullptr);
    mnl_attr_put_u32(nlh, ETHTOOL_A_BITSET_SIZE, __ETHTOOL_STATS_CNT);
    uint32_t bits = (1u << __ETHTOOL_STATS_CNT) - 1;
    mnl_attr_put(nlh, ETHTOOL_A_BITSET_VALUE, sizeof(bits), &bits);
    mnl_attr_nest_end(nlh, groups);
  });
  if (stats.ok()) ParseStatsReply(reply.message(), out);
  EthtoolGenl::Reply pause_reply;
  Status pause = genl.Get(ETHTOOL_MSG_PAUSE_GET, ETHTOOL_A_PAUSE_HEADER, ifname, pause_reply, ETHTOOL_FLAG_STATS);
  if (pause.ok()) ParsePauseStatsReply(pause_reply.message(), out);
  if (!stats.ok() && !pause.ok()) return stats.error();
  return out;
}

}  // namespace gpunoise::collect
