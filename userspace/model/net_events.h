// Per-packet and rare network events (bpf/napi, netdev, drops and nic
// collectors) as the event model sees them. The high-rate counts that are
// kept in the kernel are in model/net_counters.h.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gpunoise::model {

// A network device name (IFNAMSIZ bytes, NUL-padded), kept inline so that
// per-packet events do not allocate.
class NetDevName {
 public:
  static constexpr size_t kMaxLen = 16;
  NetDevName() { bytes_.fill(0); }
  explicit NetDevName(std::string_view s) {
    bytes_.fill(0);
    if (!s.empty()) std::memcpy(bytes_.data(), s.data(), std::min(s.size(), kMaxLen - 1));  // data() may be null
  }
  static NetDevName FromBytes(const char* data) {
    NetDevName n;
    std::memcpy(n.bytes_.data(), data, kMaxLen);
    n.bytes_[kMaxLen - 1] = 0;
    return n;
  }
  std::string_view view() const {
    return std::string_view(bytes_.data(), strnlen(bytes_.data(), kMaxLen));
  }
  bool operator==(const NetDevName& o) const { return bytes_ == o.bytes_; }

 private:
  std::array<char, kMaxLen> bytes_;
};

// Which device: ifindex is unique only inside its network namespace, so the
// namespace's inode number (as in /proc/PID/ns/net) is part of the identity.
struct NetDevice {
  uint32_t netns = 0;
  uint32_t ifindex = 0;  // 0: no device
  NetDevName name;
};

// napi:napi_poll. work == budget means the poll left packets behind.
struct NapiPoll {
  NetDevice dev;
  uint32_t napi_id = 0;
  int32_t queue = -1;
  int32_t work = 0;
  int32_t budget = 0;
};

// net:netif_receive_skb.
struct NetReceive {
  NetDevice dev;
  uint64_t skbaddr = 0;
  uint32_t len = 0;
  int32_t queue = -1;
  uint32_t segs = 1;
};

// net:net_dev_xmit. rc is the driver's return code (0: NETDEV_TX_OK).
struct NetTransmit {
  NetDevice dev;
  uint64_t skbaddr = 0;
  uint32_t len = 0;
  int32_t rc = 0;
  int32_t queue = -1;
  uint32_t segs = 1;
};

// net:net_dev_xmit_timeout: the TX watchdog found a queue stuck.
struct NetTxTimeout {
  NetDevice dev;
  int32_t queue = -1;
  NetDevName driver;
};

// napi:dql_stall_detected (byte queue limits saw a TX completion stall).
struct DqlStall {
  uint32_t thrs = 0;
  uint32_t len = 0;
  uint64_t last_reap = 0;
  uint64_t hist_head = 0;
  uint64_t now = 0;
  std::array<uint64_t, 4> hist{};
};

// tcp:tcp_retransmit_skb. Addresses are in network byte order; IPv4 uses the
// first 4 bytes.
struct TcpRetransmit {
  uint64_t skbaddr = 0;
  uint64_t skaddr = 0;
  int32_t state = 0;
  uint16_t sport = 0;
  uint16_t dport = 0;
  uint16_t family = 0;
  int32_t err = 0;
  std::array<uint8_t, 16> saddr{};
  std::array<uint8_t, 16> daddr{};
};

// net:napi_gro_receive_entry / _exit.
struct GroReceiveEntry {
  NetDevice dev;
  uint64_t skbaddr = 0;
  uint32_t napi_id = 0;
  uint32_t len = 0;
  uint32_t data_len = 0;
  uint16_t queue_mapping = 0;
};
struct GroReceiveExit {
  int32_t ret = 0;
};

// skb:kfree_skb. reason is the running kernel's enum skb_drop_reason value.
struct SkbDrop {
  NetDevice dev;
  uint64_t skbaddr = 0;
  uint64_t location = 0;
  uint32_t reason = 0;
  uint16_t protocol = 0;
};

// A NIC-driver tracepoint hit; `event` indexes the nic collector's list of
// attached events.
struct NicEvent {
  uint32_t event = 0;
  NetDevName dev;
};

}  // namespace gpunoise::model
