// The kernel's own statistics of every network device in this process's
// network namespace (what `ip -s link` shows), read with one rtnetlink dump
// (RTM_GETLINK, IFLA_STATS64). The monitor uses them for per-device packet
// and byte counters when it does not hook every packet.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "model/net_counters.h"

namespace gpunoise::collect {

struct LinkStats {
  int32_t ifindex = 0;
  std::string name;
  uint64_t rx_packets = 0, tx_packets = 0;
  uint64_t rx_bytes = 0, tx_bytes = 0;
  uint64_t rx_errors = 0, tx_errors = 0;
  uint64_t rx_dropped = 0, tx_dropped = 0;
  // Link state (IFLA_CARRIER, IFLA_OPERSTATE, IFLA_CARRIER_CHANGES).
  bool carrier = false;
  uint8_t operstate = 0;  // IF_OPER_*
  uint32_t carrier_changes = 0;
  bool deleted = false;  // an RTM_DELLINK notification
};

// "up", "down", "lowerlayerdown", ... (RFC 2863 names, as sysfs operstate).
std::string_view OperstateName(uint8_t operstate);

// How AppendDeviceStatistics names a device `names` already names: a
// recording keeps the first name, as its tracks do; a daemon that runs for
// days follows renames (a CNI plugin renames the veth it made).
enum class DeviceNaming { kKeepFirst, kFollowRenames };

// `links` (all of network namespace `netns`) as snapshot counts: RX and TX
// per device, for all its queues and CPUs (model::kDeviceWideCpu), and each
// device's name into `names`.
void AppendDeviceStatistics(std::span<const LinkStats> links, uint32_t netns, model::NetSnapshot* out,
                            std::map<model::NetDeviceKey, std::string>* names, DeviceNaming naming);

// How the messages ParseLinkDump read end a dump.
struct LinkDumpEnd {
  bool done = false;         // NLMSG_DONE or NLMSG_ERROR seen
  int error = 0;             // the errno the kernel ended the dump with (NLMSG_ERROR, or NLMSG_DONE's payload)
  bool interrupted = false;  // NLM_F_DUMP_INTR: links changed during the dump, which may miss or repeat one
};

// Parses the replies of a RTM_GETLINK dump, or link notifications
// (RTM_NEWLINK, RTM_DELLINK), public for tests. Stops at NLMSG_DONE or
// NLMSG_ERROR; `end` accumulates over the calls of one dump.
std::vector<LinkStats> ParseLinkDump(std::span<const uint8_t> data, LinkDumpEnd* end);

// One dump's links from its replies: `next_reply` gives the bytes of each
// read in turn (an error: the read failed). Fails when the kernel ends the
// dump with an error or the replies stop before its end, so a short list is
// never taken for the whole; an interrupted dump comes back flagged, for
// the caller to read again. Public for tests.
struct LinkDump {
  std::vector<LinkStats> links;
  bool interrupted = false;
};
Result<LinkDump> CollectLinkDump(const std::function<Result<std::vector<uint8_t>>()>& next_reply);

// Reads the statistics again and again on one netlink socket. A new socket
// for each of 10 readings a second cost a 64-byte UDP flood on this VM 4-7%
// of its rate, though the dump itself takes 4.5 us (docs/performance.md,
// "Device statistics on one socket"). A failed dump closes the socket (its
// unread replies would answer the next one); the next read opens a new one.
class LinkStatsReader {
 public:
  Result<std::vector<LinkStats>> Read();

 private:
  Result<LinkDump> DumpOnce(int fd);

  UniqueFd fd_;
  uint32_t seq_ = 0;
};

}  // namespace gpunoise::collect
