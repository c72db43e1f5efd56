// A thread of its own that runs tasks one after another, in the order they
// were posted: work the recorder's drain hands off without giving up the
// order of what it writes (the deflate of a trace block, which is 40% of the
// drain's CPU on a TCP stream: docs/performance.md). At most `depth` tasks
// wait; Post() blocks beyond that, so memory stays bounded and a worker that
// falls behind slows its poster instead of growing a queue.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "common/result.h"

namespace gpunoise {

class SerialWorker {
 public:
  // Starts the thread, named `name` (15 characters at most are kept). It
  // gives up every capability before it runs anything, and Start() returns
  // only after that: it must never be seen holding what the process dropped.
  static Result<std::unique_ptr<SerialWorker>> Start(const char* name, size_t depth);
  // Runs what was posted, then ends the thread.
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  void Post(std::function<void()> task);
  // Returns once every task posted before has run.
  void Wait();
  // The thread's id, for its scheduling policy (record/drain_priority.h).
  pid_t tid() const { return tid_; }

 private:
  explicit SerialWorker(size_t depth) : depth_(depth) {}
  void Run();

  const size_t depth_;
  pid_t tid_ = 0;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> tasks_;
  bool running_task_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gpunoise
