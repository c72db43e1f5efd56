#include "doctor/ethtool_netlink.h"

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

namespace gpunoise::doctor {
namespace {

// Link-mode replies with names run to several KiB; one page would truncate.
constexpr size_t kBufferBytes = 64 * 1024;
// Above every top-level attribute type of the replies we read.
constexpr uint16_t kMaxAttrType = 128;

std::string ReasonOf(int err) {
  switch (err) {
    case EOPNOTSUPP: return "the driver does not report it";
    case ENODEV: return "no such interface in this network namespace";
    default: return std::strerror(err);
  }
}

// Calls fn for each attribute nested in `nest` (libmnl's iteration macro
// relies on C's implicit void* conversion).
template <typename Fn>
void ForEachNested(const nlattr* nest, Fn&& fn) {
  const char* end = static_cast<const char*>(mnl_attr_get_payload(nest)) + mnl_attr_get_payload_len(nest);
  for (auto* a = static_cast<const nlattr*>(mnl_attr_get_payload(nest));
       mnl_attr_ok(a, static_cast<int>(end - reinterpret_cast<const char*>(a))); a = mnl_attr_next(a))
    fn(a);
}

}  // namespace

namespace {

// A reply's top-level attributes by type; nested ones are parsed by the
// callers that know their layout.
std::vector<const nlattr*> ReplyAttrs(const nlmsghdr* msg) {
  std::vector<const nlattr*> attrs(kMaxAttrType + 1, nullptr);
  auto parse = [](const nlattr* attr, void* data) -> int {
    auto* out = static_cast<std::vector<const nlattr*>*>(data);
    uint16_t type = mnl_attr_get_type(attr);
    if (type < out->size()) (*out)[type] = attr;
    return MNL_CB_OK;
  };
  mnl_attr_parse(msg, sizeof(genlmsghdr), parse, &attrs);
  return attrs;
}

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

// The bytes of one reply message.
struct EthtoolNetlink::Reply {
  std::vector<char> storage;
  const nlmsghdr* message() const { return reinterpret_cast<const nlmsghdr*>(storage.data()); }
};

EthtoolNetlink::~EthtoolNetlink() {
  if (socket_) mnl_socket_close(socket_);
}

Result<std::unique_ptr<EthtoolNetlink>> EthtoolNetlink::Open() {
  std::unique_ptr<EthtoolNetlink> nl(new EthtoolNetlink());
  nl->socket_ = mnl_socket_open(NETLINK_GENERIC);
  if (!nl->socket_) return MakeError("failed to open a generic netlink socket: {}", std::strerror(errno));
  if (mnl_socket_bind(nl->socket_, 0, MNL_SOCKET_AUTOPID) < 0)
    return MakeError("failed to bind the generic netlink socket: {}", std::strerror(errno));
  nl->port_id_ = mnl_socket_get_portid(nl->socket_);
  nl->seq_ = static_cast<uint32_t>(time(nullptr));

  std::vector<char> buf(kBufferBytes);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = GENL_ID_CTRL;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = ++nl->seq_;
  auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
  genl->cmd = CTRL_CMD_GETFAMILY;
  genl->version = 1;
  mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
  if (mnl_socket_sendto(nl->socket_, nlh, nlh->nlmsg_len) < 0)
    return MakeError("failed to query the ethtool netlink family: {}", std::strerror(errno));

  uint16_t family = 0;
  auto on_family = [](const nlmsghdr* msg, void* data) -> int {
    auto parse = [](const nlattr* attr, void* out) -> int {
      if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID && mnl_attr_validate(attr, MNL_TYPE_U16) >= 0)
        *static_cast<uint16_t*>(out) = mnl_attr_get_u16(attr);
      return MNL_CB_OK;
    };
    mnl_attr_parse(msg, sizeof(genlmsghdr), parse, data);
    return MNL_CB_OK;
  };
  int ret;
  do {
    ssize_t n = mnl_socket_recvfrom(nl->socket_, buf.data(), buf.size());
    if (n < 0) return MakeError("failed to read the ethtool netlink family: {}", std::strerror(errno));
    ret = mnl_cb_run(buf.data(), static_cast<size_t>(n), nl->seq_, nl->port_id_, on_family, &family);
  } while (ret > 0);
  if (ret < 0 || family == 0)
    return MakeError("failed to find the ethtool netlink family: {} (kernel older than 5.6?)",
                     ret < 0 ? std::strerror(errno) : "no family id");
  nl->family_ = family;
  return nl;
}

Status EthtoolNetlink::Get(uint8_t command, uint16_t header_attr, const std::string& ifname, Reply& reply) {
  std::vector<char> buf(kBufferBytes);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = family_;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = ++seq_;
  auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
  genl->cmd = command;
  genl->version = ETHTOOL_GENL_VERSION;
  nlattr* header = mnl_attr_nest_start(nlh, header_attr);
  mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, ifname.c_str());
  mnl_attr_nest_end(nlh, header);
  if (mnl_socket_sendto(socket_, nlh, nlh->nlmsg_len) < 0)
    return MakeError("failed to send an ethtool request: {}", std::strerror(errno));

  struct Collect {
    Reply* reply;
    bool got = false;
  } collect{&reply};
  auto on_reply = [](const nlmsghdr* msg, void* data) -> int {
    auto* c = static_cast<Collect*>(data);
    // Keep a copy of the whole message: attribute pointers point into it.
    auto* bytes = reinterpret_cast<const char*>(msg);
    c->reply->storage.assign(bytes, bytes + msg->nlmsg_len);
    c->got = true;
    return MNL_CB_OK;
  };
  int ret;
  do {
    ssize_t n = mnl_socket_recvfrom(socket_, buf.data(), buf.size());
    if (n < 0) return MakeError("{}", ReasonOf(errno));
    ret = mnl_cb_run(buf.data(), static_cast<size_t>(n), seq_, port_id_, on_reply, &collect);
  } while (ret > 0);
  if (ret < 0) return MakeError("{}", ReasonOf(errno));
  if (!collect.got) return MakeError("empty reply");
  return OkStatus();
}

Result<RingSizes> EthtoolNetlink::ParseRingsReply(const nlmsghdr* msg) {
  auto attrs = ReplyAttrs(msg);
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
  auto attrs = ReplyAttrs(msg);
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
  auto attrs = ReplyAttrs(msg);
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
    ForEachNested(ours, [&](const nlattr* bitset_attr) {
      if (mnl_attr_get_type(bitset_attr) != ETHTOOL_A_BITSET_BITS) return;
      ForEachNested(bitset_attr, [&](const nlattr* bit) {
        if (mnl_attr_get_type(bit) != ETHTOOL_A_BITSET_BITS_BIT) return;
        ForEachNested(bit, [&](const nlattr* field) {
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
  Reply reply;
  GN_RETURN_IF_ERROR(Get(ETHTOOL_MSG_RINGS_GET, ETHTOOL_A_RINGS_HEADER, ifname, reply));
  return ParseRingsReply(reply.message());
}

Result<Coalesce> EthtoolNetlink::CoalesceParams(const std::string& ifname) {
  Reply reply;
  GN_RETURN_IF_ERROR(Get(ETHTOOL_MSG_COALESCE_GET, ETHTOOL_A_COALESCE_HEADER, ifname, reply));
  return ParseCoalesceReply(reply.message());
}

Result<LinkModes> EthtoolNetlink::Modes(const std::string& ifname) {
  Reply reply;
  GN_RETURN_IF_ERROR(Get(ETHTOOL_MSG_LINKMODES_GET, ETHTOOL_A_LINKMODES_HEADER, ifname, reply));
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
