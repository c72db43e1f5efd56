// Reads ring sizes, interrupt coalescing and link modes of a NIC over the
// kernel's ethtool generic-netlink family (ETHTOOL_MSG_RINGS_GET,
// COALESCE_GET, LINKMODES_GET), through the socket record and monitor share
// (collect/ethtool_genl.h).
#pragma once

#include <memory>
#include <string>

#include "collect/ethtool_genl.h"
#include "common/result.h"
#include "doctor/ethtool_info.h"

struct nlmsghdr;

namespace gpunoise::doctor {

class EthtoolNetlink {
 public:
  // Opens a generic netlink socket and resolves the "ethtool" family
  // (kernels since 5.6 have it).
  static Result<std::unique_ptr<EthtoolNetlink>> Open();
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
  explicit EthtoolNetlink(std::unique_ptr<collect::EthtoolGenl> genl) : genl_(std::move(genl)) {}
  std::unique_ptr<collect::EthtoolGenl> genl_;
};

// An EthtoolSource over netlink; when the socket cannot be opened every
// query reports why.
EthtoolSource MakeNetlinkEthtoolSource();

}  // namespace gpunoise::doctor
