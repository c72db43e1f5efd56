// The recorder's drain lanes (record/drain_lanes.h): one piece of work split
// over K lanes, lane 0 on the calling thread and the others on threads of
// their own (common/serial_worker.h), and back to the caller when all are
// done. A node with hundreds of CPUs gives one drain thread more records
// than it can read and encode (docs/performance.md, "Scale model").
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "common/result.h"
#include "common/serial_worker.h"

namespace gpunoise {

class ForkJoin {
 public:
  // `lanes` >= 1; lanes - 1 threads, named `name`.
  static Result<std::unique_ptr<ForkJoin>> Start(const char* name, size_t lanes);

  size_t lanes() const { return workers_.size() + 1; }
  // Runs fn(0) here and fn(1..lanes-1) on the lanes' threads; returns when
  // all have returned. fn must not throw.
  void Run(const std::function<void(size_t lane)>& fn);
  // The lanes' threads (lane 1 first), for their scheduling policy.
  std::vector<pid_t> tids() const;

 private:
  ForkJoin() = default;
  std::vector<std::unique_ptr<SerialWorker>> workers_;
};

}  // namespace gpunoise
