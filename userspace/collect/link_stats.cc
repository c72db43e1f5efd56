#include "collect/link_stats.h"

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
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

std::vector<LinkStats> ParseLinkDump(std::span<const uint8_t> data, bool* done) {
  std::vector<LinkStats> out;
  *done = false;
  size_t off = 0;
  while (off + sizeof(nlmsghdr) <= data.size()) {
    nlmsghdr h;
    std::memcpy(&h, data.data() + off, sizeof(h));
    if (h.nlmsg_len < sizeof(nlmsghdr) || off + h.nlmsg_len > data.size()) break;
    if (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR) {
      *done = true;
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

Result<std::vector<LinkStats>> ReadLinkStats() {
  UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!fd.valid()) return MakeError("failed to open a netlink socket: {}", std::strerror(errno));
  struct {
    nlmsghdr h;
    ifinfomsg i;
  } req{};
  req.h.nlmsg_len = sizeof(req);
  req.h.nlmsg_type = RTM_GETLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.h.nlmsg_seq = 1;
  req.i.ifi_family = AF_UNSPEC;
  if (::send(fd.get(), &req, sizeof(req), 0) < 0)
    return MakeError("failed to ask netlink for link statistics: {}", std::strerror(errno));
  std::vector<LinkStats> all;
  std::vector<uint8_t> buf(64 * 1024);
  for (int i = 0; i < 10000; ++i) {
    ssize_t n = ::recv(fd.get(), buf.data(), buf.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError("failed to read link statistics from netlink: {}", std::strerror(errno));
    }
    bool done = false;
    for (auto& s : ParseLinkDump(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)), &done))
      all.push_back(std::move(s));
    if (done || n == 0) break;
  }
  return all;
}

}  // namespace gpunoise::collect
