// Replies to the ethtool netlink requests doctor sends (rings, coalescing,
// link modes with their nested bitsets), from bytes. The input is one
// message as mnl_cb_run hands it to the reply callback: its nlmsg_len is
// at least a header and at most the bytes received, which is all libmnl
// checks before our parsers see it.
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "doctor/ethtool_netlink.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gpunoise::doctor::EthtoolNetlink;
  if (size < NLMSG_HDRLEN) return 0;
  // Netlink messages are 4-byte aligned; the storage is too.
  std::vector<uint32_t> storage((size + 3) / 4);
  std::memcpy(storage.data(), data, size);
  auto* msg = reinterpret_cast<nlmsghdr*>(storage.data());
  msg->nlmsg_len = std::clamp<uint32_t>(msg->nlmsg_len, NLMSG_HDRLEN, static_cast<uint32_t>(size));
  (void)EthtoolNetlink::ParseRingsReply(msg);
  (void)EthtoolNetlink::ParseCoalesceReply(msg);
  (void)EthtoolNetlink::ParseLinkModesReply(msg);
  return 0;
}
