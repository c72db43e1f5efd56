// Two network namespaces joined by a veth pair, for tests and benchmarks
// that need real network traffic without touching the host's interfaces.
//
// veth has no NAPI of its own: the receiving side polls with NAPI only when
// an XDP program is attached to it, or when GRO is enabled on it and the skb
// can be aggregated, which for a sender with TSO on means only UDP to a
// receiver with rx-udp-gro-forwarding (drivers/net/veth.c:
// veth_skb_is_eligible_for_gro). kGro therefore turns GRO on at the receiver
// and TSO off at the sender; kXdp attaches a two-instruction XDP_PASS
// program to the receiver. veth schedules the receiver's NAPI from
// veth_xmit, i.e. on the CPU that sends, unless the receiver's NAPI is
// threaded (napi_cpu), which moves it to a kernel thread this class pins.
//
// Names carry the creating process's PID (namespaces "gnt-<pid>-<n>-s|r",
// devices "g<pid hex:6><n>s|r", 9 characters so that the threaded-NAPI
// thread "napi/<dev>-<id>" stays recognisable in 15-character comms), and
// Create() first removes namespaces of processes that no longer run, so a
// killed test leaves nothing behind for long.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace gpunoise::testing {

enum class VethNapiMode { kNone, kGro, kXdp };

struct VethPairOptions {
  VethNapiMode napi = VethNapiMode::kGro;
  // >= 0: the receiver's NAPI runs in its own kernel thread pinned to this
  // CPU (threaded NAPI). -1: it runs in NET_RX softirq on the sending CPU.
  int napi_cpu = -1;
  // >= 0: Receive Packet Steering moves protocol processing of received
  // packets to this CPU. -1: off.
  int rps_cpu = -1;
  // kXdp only: the XDP program drops this percentage of received frames at
  // random (to provoke TCP retransmissions), passing the rest.
  int xdp_drop_percent = 0;
};

class VethPair {
 public:
  enum class Side { kSender, kReceiver };

  // nullptr (and `error` set) when a step fails; what was made is removed.
  static std::unique_ptr<VethPair> Create(const VethPairOptions& options = {},
                                          std::string* error = nullptr);
  ~VethPair();
  VethPair(const VethPair&) = delete;
  VethPair& operator=(const VethPair&) = delete;

  const std::string& netns(Side side) const { return side == Side::kSender ? sender_ns_ : receiver_ns_; }
  const std::string& device(Side side) const { return side == Side::kSender ? sender_dev_ : receiver_dev_; }
  std::string address(Side side) const { return side == Side::kSender ? "10.199.0.1" : "10.199.0.2"; }
  // The namespace's inode number, as gpunoise records it (/proc/PID/ns/net).
  uint32_t netns_inode(Side side) const;
  // The device's ifindex in its namespace, 0 when it cannot be read.
  uint32_t ifindex(Side side) const;
  // The threaded-NAPI kernel thread of the receiver, 0 when not threaded.
  pid_t napi_thread() const { return napi_thread_; }

  // /sys/class/net/DEV/statistics/* of one side, read inside its namespace.
  std::map<std::string, uint64_t> LinkStatistics(Side side) const;
  // One protocol's counters from the namespace's /proc/net/snmp ("Udp").
  std::map<std::string, uint64_t> SnmpCounters(Side side, const std::string& protocol) const;

  // Runs `fn` on a new thread that has joined `side`'s network namespace, and
  // waits for it. Sockets `fn` creates belong to that namespace.
  bool RunIn(Side side, const std::function<void()>& fn) const;

 private:
  VethPair() = default;
  bool Setup(const VethPairOptions& options, std::string* error);

  std::string sender_ns_, receiver_ns_, sender_dev_, receiver_dev_;
  pid_t napi_thread_ = 0;
  int xdp_prog_fd_ = -1;
};

// Deletes "gnt-<pid>-..." namespaces whose process is gone (a test that was
// killed). Returns how many it removed.
int CleanupStaleNetworkNamespaces();

// Runs argv (no shell) and returns its exit code; stdout and stderr go to
// `output` when given.
int RunCommand(const std::vector<std::string>& argv, std::string* output = nullptr);

}  // namespace gpunoise::testing
