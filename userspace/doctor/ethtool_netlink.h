// Reads ring sizes, interrupt coalescing and link modes of a NIC over the
// kernel's ethtool generic-netlink family (ETHTOOL_MSG_RINGS_GET,
// COALESCE_GET, LINKMODES_GET), with libmnl. Read-only requests need no
// privileges; they describe interfaces in this process's network namespace.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "doctor/ethtool_info.h"

struct mnl_socket;
struct nlmsghdr;

namespace gpunoise::doctor {

class EthtoolNetlink {
 public:
  // Opens a generic netlink socket and resolves the "ethtool" family
  // (kernels since 5.6 have it).
  static Result<std::unique_ptr<EthtoolNetlink>> Open();
  ~EthtoolNetlink();
  EthtoolNetlink(const EthtoolNetlink&) = delete;
  EthtoolNetlink& operator=(const EthtoolNetlink&) = delete;

  EthtoolInfo Query(const std::string& ifname);
  Result<RingSizes> Rings(const std::string& ifname);
  Result<Coalesce> CoalesceParams(const std::string& ifname);
  Result<LinkModes> Modes(const std::string& ifname);

  // Reply parsers, public for tests that build replies by hand.
  static Result<RingSizes> ParseRingsReply(const nlmsghdr* msg);
  static Result<Coalesce> ParseCoalesceReply(const nlmsghdr* msg);
  static Result<LinkModes> ParseLinkModesReply(const nlmsghdr* msg);

 private:
  EthtoolNetlink() = default;
  struct Reply;
  // Sends one GET request for `ifname` and collects the reply's attributes.
  Status Get(uint8_t command, uint16_t header_attr, const std::string& ifname, Reply& reply);

  mnl_socket* socket_ = nullptr;
  uint16_t family_ = 0;
  uint32_t port_id_ = 0;
  uint32_t seq_ = 0;
};

// An EthtoolSource over netlink; when the socket cannot be opened every
// query reports why.
EthtoolSource MakeNetlinkEthtoolSource();

}  // namespace gpunoise::doctor
