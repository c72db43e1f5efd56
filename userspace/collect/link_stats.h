// The kernel's own statistics of every network device in this process's
// network namespace (what `ip -s link` shows), read with one rtnetlink dump
// (RTM_GETLINK, IFLA_STATS64). The monitor uses them for per-device packet
// and byte counters when it does not hook every packet.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace gpunoise::collect {

struct LinkStats {
  int32_t ifindex = 0;
  std::string name;
  uint64_t rx_packets = 0, tx_packets = 0;
  uint64_t rx_bytes = 0, tx_bytes = 0;
  uint64_t rx_errors = 0, tx_errors = 0;
  uint64_t rx_dropped = 0, tx_dropped = 0;
};

Result<std::vector<LinkStats>> ReadLinkStats();

// Parses the replies of a RTM_GETLINK dump (public for tests). Stops at
// NLMSG_DONE; sets *done when it was seen.
std::vector<LinkStats> ParseLinkDump(std::span<const uint8_t> data, bool* done);

}  // namespace gpunoise::collect
