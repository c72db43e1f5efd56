#include "collect/link_monitor.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <span>

namespace gpunoise::collect {

Result<LinkMonitor> LinkMonitor::Open() {
  UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE));
  if (!fd.valid()) return MakeError("failed to open a netlink socket for link events: {}", std::strerror(errno));
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = RTMGRP_LINK;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return MakeError("failed to subscribe to link events: {}", std::strerror(errno));
  return LinkMonitor(std::move(fd));
}

void LinkMonitor::Seed(const std::vector<LinkStats>& links) {
  for (const LinkStats& l : links) known_[l.ifindex] = {l.name, l.carrier};
}

std::vector<model::LinkEvent> LinkMonitor::Apply(uint64_t ts, const std::vector<LinkStats>& notices) {
  std::vector<model::LinkEvent> out;
  for (const LinkStats& n : notices) {
    auto it = known_.find(n.ifindex);
    model::LinkEvent e;
    e.ts = ts;
    e.ifindex = n.ifindex;
    e.device = n.name.empty() && it != known_.end() ? it->second.name : n.name;
    e.carrier = n.carrier;
    e.operstate = std::string(OperstateName(n.operstate));
    e.carrier_changes = n.carrier_changes;
    e.source = "netlink";
    if (n.deleted) {
      if (it == known_.end()) continue;
      e.kind = model::LinkEventKind::kRemoved;
      known_.erase(it);
      out.push_back(std::move(e));
      continue;
    }
    if (it == known_.end()) {
      // A device created during the recording: its state is the baseline.
      known_[n.ifindex] = {n.name, n.carrier};
      e.kind = model::LinkEventKind::kAppeared;
      out.push_back(std::move(e));
      continue;
    }
    it->second.name = e.device;
    // RTM_NEWLINK also announces MTU, flags, address changes: only a carrier
    // flip is an event here.
    if (n.carrier == it->second.carrier) continue;
    it->second.carrier = n.carrier;
    e.kind = n.carrier ? model::LinkEventKind::kCarrierUp : model::LinkEventKind::kCarrierDown;
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<model::LinkEvent> LinkMonitor::Poll(uint64_t ts) {
  std::vector<LinkStats> notices;
  std::vector<uint8_t> buf(32 * 1024);
  for (int i = 0; i < 1000; ++i) {
    ssize_t n = ::recv(fd_.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == ENOBUFS) {
        ++overruns_;  // the kernel dropped notifications; the next sample's carrier_changes covers them
        continue;
      }
      break;  // EAGAIN: nothing more
    }
    if (n == 0) break;
    LinkDumpEnd end;
    for (auto& s : ParseLinkDump(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)), &end))
      notices.push_back(std::move(s));
  }
  return Apply(ts, notices);
}

}  // namespace gpunoise::collect
