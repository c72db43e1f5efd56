#include "common/serial_worker.h"

#include <pthread.h>

#include <future>
#include <string>
#include <system_error>

#include "common/capabilities.h"
#include "common/thread_priority.h"

namespace gpunoise {

Result<std::unique_ptr<SerialWorker>> SerialWorker::Start(const char* name, size_t depth) {
  std::unique_ptr<SerialWorker> worker(new SerialWorker(depth == 0 ? 1 : depth));
  std::promise<std::string> ready;
  std::future<std::string> dropped = ready.get_future();
  SerialWorker* w = worker.get();
  try {
    w->thread_ = std::thread([w, name, ready = std::move(ready)]() mutable {
      ::pthread_setname_np(::pthread_self(), name);
      w->tid_ = ThisThreadId();
      Status st = DropAllCapabilitiesOfThisThread();
      ready.set_value(st.ok() ? "" : st.error().message);
      if (st.ok()) w->Run();
    });
  } catch (const std::system_error& e) {
    return MakeError("no thread for {}: {}", name, e.what());
  }
  if (std::string error = dropped.get(); !error.empty()) {
    w->thread_.join();
    return MakeError("{} could not drop its capabilities: {}", name, error);
  }
  return worker;
}

SerialWorker::~SerialWorker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SerialWorker::Post(std::function<void()> task) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return tasks_.size() < depth_; });
  tasks_.push_back(std::move(task));
  lock.unlock();
  changed_.notify_all();
}

void SerialWorker::Wait() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return tasks_.empty() && !running_task_; });
}

void SerialWorker::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    changed_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopped, and nothing left to run
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    running_task_ = true;
    lock.unlock();
    changed_.notify_all();  // a slot is free
    task();
    lock.lock();
    running_task_ = false;
    changed_.notify_all();  // Wait() may be done
  }
}

}  // namespace gpunoise
