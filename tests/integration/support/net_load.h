// Bounded network loads over a VethPair: a small-packet UDP flood and a TCP
// stream, each a sender thread in the sender's namespace and a receiver
// thread in the receiver's, pinned to chosen CPUs. No external tools.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>

#include "integration/support/veth_pair.h"

namespace gpunoise::testing {

struct UdpFloodOptions {
  std::chrono::milliseconds duration{3000};
  int sender_cpu = 0;    // -1: not pinned
  int receiver_cpu = 1;  // -1: not pinned
  size_t payload_bytes = 18;  // 18 B of UDP payload: a 60-byte frame
  uint16_t port = 9000;
  // false: the receiver binds and never reads, so once its buffer is full
  // every datagram is dropped (SOCKET_RCVBUFF, UDP RcvbufErrors).
  bool receiver_reads = true;
  int receive_buffer_bytes = 0;  // SO_RCVBUF; 0: the default
  uint64_t max_packets = 0;      // 0: until `duration` passes
  unsigned batch = 64;           // datagrams per sendmmsg
  // Called on the sender thread once both sockets are ready and before the
  // first datagram (e.g. to read statistics at the start).
  std::function<void()> on_ready;
};

struct UdpFloodResult {
  uint64_t sent = 0;         // datagrams the kernel accepted
  uint64_t send_errors = 0;  // sendmmsg failures (ENOBUFS, ...)
  uint64_t received = 0;     // datagrams the receiver read
  double seconds = 0;        // sending time
  pid_t sender_tid = 0;
  pid_t receiver_tid = 0;
  double sent_per_second() const { return seconds > 0 ? static_cast<double>(sent) / seconds : 0; }
};

UdpFloodResult RunUdpFlood(const VethPair& pair, const UdpFloodOptions& options);

struct TcpStreamOptions {
  std::chrono::milliseconds duration{3000};
  int sender_cpu = 0;
  int receiver_cpu = 1;
  size_t write_bytes = 64 * 1024;
  uint16_t port = 9001;
};

struct TcpStreamResult {
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  double seconds = 0;
  bool connected = false;
  double gbit_per_second() const {
    return seconds > 0 ? static_cast<double>(bytes_received) * 8 / 1e9 / seconds : 0;
  }
};

TcpStreamResult RunTcpStream(const VethPair& pair, const TcpStreamOptions& options);

}  // namespace gpunoise::testing
