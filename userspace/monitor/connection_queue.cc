#include "monitor/connection_queue.h"

namespace gpunoise::monitor {

void ConnectionQueue::enqueue(std::function<void()> fn) {
  std::unique_lock<std::mutex> lock(mu_);
  room_cv_.wait(lock, [&] { return stopping_ || busy_ + jobs_.size() < max_; });
  if (stopping_) return;  // httplib's socket closes with the server
  jobs_.push_back(std::move(fn));
  // A thread per open connection: start one unless one is idle.
  if (busy_ + jobs_.size() > threads_.size()) threads_.emplace_back([this] { Work(); });
  work_cv_.notify_one();
}

void ConnectionQueue::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    ++busy_;
    lock.unlock();
    job();
    lock.lock();
    --busy_;
    room_cv_.notify_one();
  }
}

void ConnectionQueue::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  room_cv_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

}  // namespace gpunoise::monitor
