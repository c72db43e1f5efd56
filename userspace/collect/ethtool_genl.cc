#include "collect/ethtool_genl.h"

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace gpunoise::collect {
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

}  // namespace

std::vector<const nlattr*> GenlReplyAttrs(const nlmsghdr* msg) {
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

// libmnl's iteration macro relies on C's implicit void* conversion.
void ForEachNestedAttr(const nlattr* nest, const std::function<void(const nlattr*)>& fn) {
  const char* end = static_cast<const char*>(mnl_attr_get_payload(nest)) + mnl_attr_get_payload_len(nest);
  for (auto* a = static_cast<const nlattr*>(mnl_attr_get_payload(nest));
       mnl_attr_ok(a, static_cast<int>(end - reinterpret_cast<const char*>(a))); a = mnl_attr_next(a))
    fn(a);
}

EthtoolGenl::~EthtoolGenl() {
  if (socket_) mnl_socket_close(socket_);
}

Result<std::unique_ptr<EthtoolGenl>> EthtoolGenl::Open(const char* family_name) {
  std::unique_ptr<EthtoolGenl> nl(new EthtoolGenl());
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
  mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, family_name);
  if (mnl_socket_sendto(nl->socket_, nlh, nlh->nlmsg_len) < 0)
    return MakeError("failed to query the {} netlink family: {}", family_name, std::strerror(errno));

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
    if (n < 0) return MakeError("failed to read the {} netlink family: {}", family_name, std::strerror(errno));
    ret = mnl_cb_run(buf.data(), static_cast<size_t>(n), nl->seq_, nl->port_id_, on_family, &family);
  } while (ret > 0);
  if (ret < 0 || family == 0)
    return MakeError("failed to find the {} netlink family: {} (kernel too old?)", family_name,
                     ret < 0 ? std::strerror(errno) : "no family id");
  nl->family_ = family;
  return nl;
}

Status EthtoolGenl::Get(uint8_t command, uint16_t header_attr, const std::string& ifname, Reply& reply,
                        uint32_t flags, const std::function<void(nlmsghdr*)>& extra) {
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
  if (flags) mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, flags);
  mnl_attr_nest_end(nlh, header);
  if (extra) extra(nlh);
  if (mnl_socket_sendto(socket_, nlh, nlh->nlmsg_len) < 0)
    return MakeError("failed to send an ethtool request: {}", std::strerror(errno));

  struct Collect {
    Reply* reply;
    bool got = false;
  } collect{&reply};
  auto on_reply = [](const nlmsghdr* msg, void* data) -> int {
    auto* c = static_cast<Collect*>(data);
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

Status EthtoolGenl::Dump(uint8_t command, uint8_t version, const std::function<void(nlmsghdr*)>& fill,
                         const std::function<void(const nlmsghdr*)>& on_message) {
  std::vector<char> buf(kBufferBytes);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = family_;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  nlh->nlmsg_seq = ++seq_;
  auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
  genl->cmd = command;
  genl->version = version;
  if (fill) fill(nlh);
  if (mnl_socket_sendto(socket_, nlh, nlh->nlmsg_len) < 0)
    return MakeError("failed to send a netlink dump request: {}", std::strerror(errno));
  auto cb = [](const nlmsghdr* msg, void* data) -> int {
    (*static_cast<const std::function<void(const nlmsghdr*)>*>(data))(msg);
    return MNL_CB_OK;
  };
  int ret;
  do {
    ssize_t n = mnl_socket_recvfrom(socket_, buf.data(), buf.size());
    if (n < 0) return MakeError("{}", ReasonOf(errno));
    ret = mnl_cb_run(buf.data(), static_cast<size_t>(n), seq_, port_id_, cb,
                     const_cast<std::function<void(const nlmsghdr*)>*>(&on_message));
  } while (ret > 0);
  if (ret < 0) return MakeError("{}", ReasonOf(errno));
  return OkStatus();
}

}  // namespace gpunoise::collect
