// A deadline for reading each request, as Go's http.Server has in
// ReadHeaderTimeout. cpp-httplib's read timeout bounds each read(2) only:
// a client that trickles one byte a little faster than that holds a
// connection thread for as long as it likes, and enough of them fill the
// connection cap so that scrapes wait. Here a connection that has not
// delivered a whole request within `limit` of being accepted, or of its
// previous response, is shut down. The time a handler takes to answer and
// the time a response takes to write are not counted.
//
// cpp-httplib hands no accepted socket to its user, so a watchdog finds
// the connections of the listening port among the process's descriptors
// (socket inode, peer address) and the request hooks name theirs by the
// peer address the request carries. A connection is shut down through a
// dup() whose inode was checked, so a descriptor number closed and reused
// meanwhile is never touched.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace gpunoise::monitor {

class RequestDeadlines {
 public:
  // Watches connections to local `port`, scanning every `scan` apart.
  RequestDeadlines(int port, std::chrono::milliseconds limit,
                   std::chrono::milliseconds scan = std::chrono::milliseconds(200));
  ~RequestDeadlines();
  RequestDeadlines(const RequestDeadlines&) = delete;
  RequestDeadlines& operator=(const RequestDeadlines&) = delete;

  // The request from this peer is in (stop its clock); its response is
  // out (start the clock for the next request).
  void RequestRead(const std::string& peer_addr, int peer_port);
  void ResponseWritten(const std::string& peer_addr, int peer_port);

  // Connections shut down for missing their deadline.
  uint64_t expired() const;

 private:
  using Peer = std::pair<std::string, int>;
  struct Connection {
    int fd = -1;
    Peer peer;
    bool armed = true;
    std::chrono::steady_clock::time_point deadline;
    bool seen = false;  // in the latest scan
  };
  void Scan(std::chrono::steady_clock::time_point now);
  void Run();

  const int port_;
  const std::chrono::milliseconds limit_, scan_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Connection> connections_;  // by socket inode
  std::set<Peer> answered_before_seen_;         // requests read before the watchdog saw their socket
  uint64_t expired_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gpunoise::monitor
