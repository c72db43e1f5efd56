// The process and name of each thread a node record names (a reclaim
// stall's, an IPI's sender), read from /proc once per tid while the thread
// most likely still exists. A thread that is gone by then keeps the process
// the kernel reported with the record (the kwork log's tgid), never a
// made-up one; without that its process is unknown (0).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace gpunoise::record {

class ThreadNames {
 public:
  // `proc_root` is "/proc" except in tests.
  explicit ThreadNames(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}

  // (pid, name) of `tid`; `tgid` is the process the record itself carries
  // (0: none), used when /proc no longer has the thread.
  const std::pair<int32_t, std::string>& Who(int32_t tid, int32_t tgid = 0);

 private:
  std::string proc_root_;
  std::map<int32_t, std::pair<int32_t, std::string>> threads_;
};

}  // namespace gpunoise::record
