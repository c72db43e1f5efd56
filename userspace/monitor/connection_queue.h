// The monitor's HTTP connections each get a thread of their own, up to a
// cap. httplib's own pool is a fixed set of threads in front of an
// unbounded queue: two clients that connect and send nothing hold two
// workers for the whole read timeout while Prometheus' scrape waits in
// the queue behind them. Here a new connection is served at once while
// fewer than `max_connections` are open; beyond that the acceptor waits
// (the kernel's backlog holds the rest) until one closes, which an idle
// connection does after the keep-alive timeout. Memory is bounded (one
// thread per open connection, threads kept for reuse) and nothing queues
// without limit.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpunoise::monitor {

class ConnectionQueue : public httplib::TaskQueue {
 public:
  explicit ConnectionQueue(size_t max_connections) : max_(max_connections ? max_connections : 1) {}
  ~ConnectionQueue() override { shutdown(); }

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void Work();

  const size_t max_;
  std::mutex mu_;
  std::condition_variable work_cv_, room_cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t busy_ = 0;
  bool stopping_ = false;
};

}  // namespace gpunoise::monitor
