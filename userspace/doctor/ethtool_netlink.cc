#include "doctor/ethtool_netlink.h"

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <vector>

namespace gpunoise::doctor {
namespace {

using collect::ForEachNestedAttr;

std::optional<uint32_t> U32(const std::vector<const nlattr*>& attrs, int type) {
  const nlattr* a = attrs[type];
  if (!a || mnl_attr_validate(a, MNL_TYPE_U32) < 0) return std::nullopt;
  return mnl_attr_get_u32(a);
}

std::optional<uint8_t> U8(const std::vector<const nlattr*>& attrs, int type) {
  const nlattr* a = attrs[type];
  if (!a || mnl_attr_validate(a, MNL_TYPE_U8) < 0) return std::nullopt;
  return mnl_attr_get_u8(a);
}

}  // namespace

Result<std::unique_ptr<EthtoolNetlink>> EthtoolNetlink::Open() {
  GN_ASSIGN_OR_RETURN(auto genl, collect::EthtoolGenl::Open());
  return std::unique_ptr<EthtoolNetlink>(new EthtoolNetlink(std::move(genl)));
}

Result<RingSizes> EthtoolNetlink::ParseRingsReply(const nlmsghdr* msg) {
  auto attrs = collect::GenlReplyAttrs(msg);
  auto rx_max = U32(attrs, ETHTOOL_A_RINGS_RX_MAX), rx = U32(attrs, ETHTOOL_A_RINGS_RX);
  if (!rx_max || !rx) return MakeError("the driver does not report it");
  RingSizes r;
  r.rx = *rx;
  r.rx_max = *rx_max;
  r.tx = U32(attrs, ETHTOOL_A_RINGS_TX).value_or(0);
  r.tx_max = U32(attrs, ETHTOOL_A_RINGS_TX_MAX).value_or(0);
  return r;
}

Result<Coalesce> EthtoolNetlink::ParseCoalesceReply(const nlmsghdr* msg) {
  auto attrs = collect::GenlReplyAttrs(msg);
  auto flag = [&](int type) -> std::optional<bool> {
    auto v = U8(attrs, type);
    if (!v) return std::nullopt;
    return *v != 0;
  };
  Coalesce c;
  c.rx_usecs = U32(attrs, ETHTOOL_A_COALESCE_RX_USECS);
  c.rx_max_frames = U32(attrs, ETHTOOL_A_COALESCE_RX_MAX_FRAMES);
  c.tx_usecs = U32(attrs, ETHTOOL_A_COALESCE_TX_USECS);
  c.tx_max_frames = U32(attrs, ETHTOOL_A_COALESCE_TX_MAX_FRAMES);
  c.adaptive_rx = flag(ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX);
  c.adaptive_tx = flag(ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX);
  return c;
}

Result<LinkModes> EthtoolNetlink::ParseLinkModesReply(const nlmsghdr* msg) {
  auto attrs = collect::GenlReplyAttrs(msg);
  LinkModes m;
  if (auto speed = U32(attrs, ETHTOOL_A_LINKMODES_SPEED);
      speed && *speed != 0 && *speed != static_cast<uint32_t>(SPEED_UNKNOWN))
    m.speed_mbps = *speed;
  if (auto duplex = U8(attrs, ETHTOOL_A_LINKMODES_DUPLEX)) {
    if (*duplex == DUPLEX_FULL) m.full_duplex = true;
    else if (*duplex == DUPLEX_HALF) m.full_duplex = false;
  }
  if (auto autoneg = U8(attrs, ETHTOOL_A_LINKMODES_AUTONEG)) m.autoneg = *autoneg == AUTONEG_ENABLE;
  // ETHTOOL_A_LINKMODES_OURS is a bitset whose mask holds the supported
  // modes; in the verbose form each bit comes as a nest with its name.
  if (const nlattr* ours = attrs[ETHTOOL_A_LINKMODES_OURS]) {
    ForEachNestedAttr(ours, [&](const nlattr* bitset_attr) {
      if (mnl_attr_get_type(bitset_attr) != ETHTOOL_A_BITSET_BITS) return;
      ForEachNestedAttr(bitset_attr, [&](const nlattr* bit) {
        if (mnl_attr_get_type(bit) != ETHTOOL_A_BITSET_BITS_BIT) return;
        ForEachNestedAttr(bit, [&](const nlattr* field) {
          if (mnl_attr_get_type(field) != ETHTOOL_A_BITSET_BIT_NAME) return;
          if (mnl_attr_validate(field, MNL_TYPE_NUL_STRING) < 0) return;
          if (auto mode = ParseLinkModeName(mnl_attr_get_str(field))) m.supported.push_back(*mode);
        });
      });
    });
  }
  return m;
}

Result<RingSizes> EthtoolNetlink::Rings(const std::string& ifname) {
  collect::EthtoolGenl::Reply reply;
  GN_RETURN_IF_ERROR(genl_->Get(ETHTOOL_MSG_RINGS_GET, ETHTOOL_A_RINGS_HEADER, ifname, reply));
  return ParseRingsReply(reply.message());
}

Result<Coalesce> EthtoolNetlink::CoalesceParams(const std::string& ifname) {
  collect::EthtoolGenl::Reply reply;
  GN_RETURN_IF_ERROR(genl_->Get(ETHTOOL_MSG_COALESCE_GET, ETHTOOL_A_COALESCE_HEADER, ifname, reply));
  return ParseCoalesceReply(reply.message());
}

Result<LinkModes> EthtoolNetlink::Modes(const std::string& ifname) {
  collect::EthtoolGenl::Reply reply;
  GN_RETURN_IF_ERROR(genl_->Get(ETHTOOL_MSG_LINKMODES_GET, ETHTOOL_A_LINKMODES_HEADER, ifname, reply));
  return ParseLinkModesReply(reply.message());
}

EthtoolInfo EthtoolNetlink::Query(const std::string& ifname) {
  EthtoolInfo info;
  info.rings = Rings(ifname);
  info.coalesce = CoalesceParams(ifname);
  info.link_modes = Modes(ifname);
  return info;
}

EthtoolSource MakeNetlinkEthtoolSource() {
  auto opened = EthtoolNetlink::Open();
  if (!opened.ok()) {
    std::string reason = opened.error().message;
    return [reason](const std::string&) {
      EthtoolInfo info;
      info.rings = Error{reason};
      info.coalesce = Error{reason};
      info.link_modes = Error{reason};
      return info;
    };
  }
  std::shared_ptr<EthtoolNetlink> nl = std::move(opened).value();
  return [nl](const std::string& ifname) { return nl->Query(ifname); };
}

}  // namespace gpunoise::doctor
