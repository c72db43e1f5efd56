// A socket on the kernel's ethtool generic-netlink family (kernels since
// 5.6), shared by `doctor` (rings, coalescing, link modes), `record` and
// `monitor` (statistics groups, pause statistics). Read-only requests need
// no privileges; they describe interfaces in this process's network
// namespace. libmnl builds and walks the messages.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

struct mnl_socket;
struct nlmsghdr;
struct nlattr;

namespace gpunoise::collect {

class EthtoolGenl {
 public:
  // Opens a generic netlink socket and resolves the "ethtool" family (or,
  // with `family`, another generic-netlink family such as "netdev").
  static Result<std::unique_ptr<EthtoolGenl>> Open(const char* family = "ethtool");
  ~EthtoolGenl();
  EthtoolGenl(const EthtoolGenl&) = delete;
  EthtoolGenl& operator=(const EthtoolGenl&) = delete;

  // The bytes of one reply message (attribute pointers point into it).
  struct Reply {
    std::vector<char> storage;
    const nlmsghdr* message() const { return reinterpret_cast<const nlmsghdr*>(storage.data()); }
  };

  // Sends one GET request for `ifname` (header nest `header_attr`, with
  // ETHTOOL_A_HEADER_FLAGS = `flags` when non-zero; `extra` adds request
  // attributes) and keeps the reply. Errors read "the driver does not report
  // it" (EOPNOTSUPP), "no such interface in this network namespace".
  Status Get(uint8_t command, uint16_t header_attr, const std::string& ifname, Reply& reply,
             uint32_t flags = 0, const std::function<void(nlmsghdr*)>& extra = {});
  // A dump request (NLM_F_DUMP) of `command` with the attributes `fill`
  // adds; calls `on_message` for each reply message.
  Status Dump(uint8_t command, uint8_t version, const std::function<void(nlmsghdr*)>& fill,
              const std::function<void(const nlmsghdr*)>& on_message);

 private:
  EthtoolGenl() = default;
  mnl_socket* socket_ = nullptr;
  uint16_t family_ = 0;
  uint32_t port_id_ = 0;
  uint32_t seq_ = 0;
};

// A reply's top-level attributes by type (index = type, nullptr when
// absent), past the generic-netlink header.
std::vector<const nlattr*> GenlReplyAttrs(const nlmsghdr* msg);

// Calls fn for each attribute nested in `nest`.
void ForEachNestedAttr(const nlattr* nest, const std::function<void(const nlattr*)>& fn);

}  // namespace gpunoise::collect
