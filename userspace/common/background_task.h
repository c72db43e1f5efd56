// Work that the recorder's drain thread must never wait for (reading
// /proc/kallsyms, scanning every thread's affinity), run on a thread of its
// own. The drain polls for the result; a pause of the drain is a pause of
// every ring, and inside a NET_RX storm a 4 MiB ring fills in ~90 ms.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <system_error>
#include <utility>

namespace gpunoise {

// Gives the calling thread up: every capability (they are per thread, and a
// task may start before the recorder drops its own) and nice 10, below the
// node's own work. Not nice 19: on a node busy on every CPU that starved a
// task the end of a recording waits for (a 1 s recording took 4 s longer).
void DemoteThisThread();

// Whether the calling thread holds any capability (effective or permitted).
bool ThisThreadHoldsCapabilities();

template <typename T>
class BackgroundTask {
 public:
  explicit BackgroundTask(std::function<T()> work) {
    try {
      std::promise<void> demoted;
      std::future<void> demoted_seen = demoted.get_future();
      future_ = std::async(std::launch::async, [work, demoted = std::move(demoted)]() mutable {
        DemoteThisThread();
        demoted.set_value();
        return work();
      });
      // Until it runs, the new thread holds what its creator holds. One
      // started just before the recorder drops its capabilities must not be
      // seen with them after the drop (CI saw one on a loaded machine), so a
      // creator that holds any waits for the demotion (a thread start).
      // After the drop the drain creates tasks that inherit nothing, and
      // does not wait.
      if (ThisThreadHoldsCapabilities()) demoted_seen.wait();
    } catch (const std::system_error&) {
      value_ = work();  // no thread to be had (the node's thread limit): here and now
    }
  }
  ~BackgroundTask() {
    if (future_.valid()) future_.wait();
  }
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;

  // The result once the work is done, else nullptr; never blocks.
  T* TryGet() {
    if (!value_ && future_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return nullptr;
    return &Get();
  }
  // The result, waiting for the work to finish.
  T& Get() {
    if (!value_) value_ = future_.get();
    return *value_;
  }

 private:
  std::future<T> future_;
  std::optional<T> value_;
};

}  // namespace gpunoise
