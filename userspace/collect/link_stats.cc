#include "collect/link_stats.h"

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"

namespace gpunoise::collect {

std::string_view OperstateName(uint8_t operstate) {
  switch (operstate) {
    case IF_OPER_NOTPRESENT: return "notpresent";
    case IF_OPER_DOWN: return "down";
    case IF_OPER_LOWERLAYERDOWN: return "lowerlayerdown";
    case IF_OPER_TESTING: return "testing";
    case IF_OPER_DORMANT: return "dormant";
    case IF_OPER_UP: return "up";
    default: return "unknown";
  }
}

std::vector<LinkStats> ParseLinkDump(std::span<const uint8_t> data, LinkDumpEnd* end) {
  std::vector<LinkStats> out;
  size_t off = 0;
  while (off + sizeof(nlmsghdr) <= data.size()) {
    nlmsghdr h;
    std::memcpy(&h, data.data() + off, sizeof(h));
    if (h.nlmsg_len < sizeof(nlmsghdr) || off + h.nlmsg_len > data.size()) break;
    if (h.nlmsg_flags & NLM_F_DUMP_INTR) end->interrupted = true;
    if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR) {
      // Both carry an int first: NLMSG_ERROR's nlmsgerr.error, and since
      // Linux 4.x NLMSG_DONE's dump_done_errno (a dump that failed part way).
      int32_t code = 0;
      if (h.nlmsg_len >= NLMSG_LENGTH(sizeof(code))) std::memcpy(&code, data.data() + off + NLMSG_HDRLEN, sizeof(code));
      end->done = true;
      if (code < 0) end->error = -code;
      break;
    }
    if ((h.nlmsg_type == RTM_NEWLINK || h.nlmsg_type == RTM_DELLINK) &&
        h.nlmsg_len >= NLMSG_LENGTH(sizeof(ifinfomsg))) {
      ifinfomsg ifi;
      std::memcpy(&ifi, data.data() + off + NLMSG_HDRLEN, sizeof(ifi));
      // A bridge announces its ports' STP state in RTM_NEWLINK messages of
      // family AF_BRIDGE, on the same group, without IFLA_CARRIER: read as
      // a link they would say "carrier down" for a port whose link is up.
      if (ifi.ifi_family == AF_BRIDGE) {
        off += NLMSG_ALIGN(h.nlmsg_len);
        continue;
      }
      LinkStats s;
      s.ifindex = ifi.ifi_index;
      s.deleted = h.nlmsg_type == RTM_DELLINK;
      size_t a = off + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
      const size_t end = off + h.nlmsg_len;
      while (a + sizeof(rtattr) <= end) {
        rtattr ra;
        std::memcpy(&ra, data.data() + a, sizeof(ra));
        if (ra.rta_len < sizeof(rtattr) || a + ra.rta_len > end) break;
        const uint8_t* payload = data.data() + a + RTA_LENGTH(0);
        size_t len = ra.rta_len - RTA_LENGTH(0);
        if (ra.rta_type == IFLA_IFNAME) {
          s.name.assign(reinterpret_cast<const char*>(payload), strnlen(reinterpret_cast<const char*>(payload), len));
        } else if (ra.rta_type == IFLA_CARRIER && len >= 1) {
          s.carrier = payload[0] != 0;
        } else if (ra.rta_type == IFLA_OPERSTATE && len >= 1) {
          s.operstate = payload[0];
        } else if (ra.rta_type == IFLA_CARRIER_CHANGES && len >= 4) {
          std::memcpy(&s.carrier_changes, payload, 4);
        } else if (ra.rta_type == IFLA_STATS64 && len >= sizeof(rtnl_link_stats64) - 8 * 2) {
          rtnl_link_stats64 st{};
          std::memcpy(&st, payload, std::min(len, sizeof(st)));
          s.rx_packets = st.rx_packets;
          s.tx_packets = st.tx_packets;
          s.rx_bytes = st.rx_bytes;
          s.tx_bytes = st.tx_bytes;
          s.rx_errors = st.rx_errors;
          s.tx_errors = st.tx_errors;
          s.rx_dropped = st.rx_dropped;
          s.tx_dropped = st.tx_dropped;
        }
        a += RTA_ALIGN(ra.rta_len);
      }
      out.push_back(std::move(s));
    }
    off += NLMSG_ALIGN(h.nlmsg_len);
  }
  return out;
}

void AppendDeviceStatistics(std::span<const LinkStats> links, uint32_t netns, model::NetSnapshot* out,
                            std::map<model::NetDeviceKey, std::string>* names, DeviceNaming naming) {
  for (const LinkStats& l : links) {
    if (l.deleted || l.ifindex <= 0) continue;
    model::NetDeviceKey dev{netns, static_cast<uint32_t>(l.ifindex)};
    if (naming == DeviceNaming::kFollowRenames) (*names)[dev] = l.name;
    else names->try_emplace(dev, l.name);
    out->devices.push_back({dev, -1, model::NetDirection::kRx, model::kDeviceWideCpu, l.rx_packets, l.rx_bytes,
                            l.rx_errors});
    out->devices.push_back({dev, -1, model::NetDirection::kTx, model::kDeviceWideCpu, l.tx_packets, l.tx_bytes,
                            l.tx_errors});
  }
}

Result<LinkDump> CollectLinkDump(const std::function<Result<std::vector<uint8_t>>()>& next_reply) {
  LinkDump dump;
  LinkDumpEnd end;
  while (!end.done) {
    GN_ASSIGN_OR_RETURN(std::vector<uint8_t> reply, next_reply());
    if (reply.empty()) return MakeError("the link statistics dump stopped before its end");
    for (auto& s : ParseLinkDump(reply, &end)) dump.links.push_back(std::move(s));
  }
  if (end.error) return MakeError("the kernel ended the link statistics dump with an error: {}", std::strerror(end.error));
  dump.interrupted = end.interrupted;
  return dump;
}

// One RTM_GETLINK dump on `fd`. Any failure leaves the socket with replies
// unread: the caller closes it.
Result<LinkDump> LinkStatsReader::DumpOnce(int fd) {
  struct {
    nlmsghdr h;
    ifinfomsg i;
  } req{};
  req.h.nlmsg_len = sizeof(req);
  req.h.nlmsg_type = RTM_GETLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.h.nlmsg_seq = ++seq_;
  req.i.ifi_family = AF_UNSPEC;
  if (::send(fd, &req, sizeof(req), 0) < 0)
    return MakeError("failed to ask netlink for link statistics: {}", std::strerror(errno));
  // A message longer than the buffer would come cut (MSG_TRUNC); one link's
  // message is a few KiB, so 64 KiB holds many.
  constexpr size_t kReplyBytes = 64 * 1024;
  // Bounds a kernel that never ends the dump; a node's links take a few
  // replies each holding dozens of them.
  int reads_left = 100000;
  auto next_reply = [&]() -> Result<std::vector<uint8_t>> {
    std::vector<uint8_t> buf(kReplyBytes);
    while (reads_left-- > 0) {
      iovec iov{buf.data(), buf.size()};
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      ssize_t n = ::recvmsg(fd, &msg, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        return MakeError("failed to read link statistics from netlink: {}", std::strerror(errno));
      }
      if (msg.msg_flags & MSG_TRUNC)
        return MakeError("a link statistics reply did not fit in {} KiB", kReplyBytes / 1024);
      buf.resize(static_cast<size_t>(n));
      return buf;
    }
    return MakeError("the link statistics dump did not end");
  };
  return CollectLinkDump(next_reply);
}

Result<std::vector<LinkStats>> LinkStatsReader::Read() {
  // An interrupted dump (a link added, removed or renamed meanwhile) may
  // miss a device or list one twice: read it again rather than take it.
  constexpr int kAttempts = 3;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (!fd_.valid()) {
      fd_ = UniqueFd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
      if (!fd_.valid()) return MakeError("failed to open a netlink socket: {}", std::strerror(errno));
    }
    Result<LinkDump> dump = DumpOnce(fd_.get());
    if (!dump.ok()) {
      fd_ = UniqueFd();  // replies of the failed dump may still be queued on it
      return dump.error();
    }
    if (!dump->interrupted) return std::move(dump->links);
  }
  return MakeError("the links changed during each of {} link statistics dumps", kAttempts);
}

}  // namespace gpunoise::collect
