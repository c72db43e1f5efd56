// The tracepoints that tell what a NIC, its interrupts and softirqs and the
// CPUs were doing before a kernel died: what `blackbox arm` enables in the
// persistent instance, and what the live-instance test enables too.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace gpunoise::blackbox {

// "group/event" names: interrupts, softirqs, NAPI, the packet path, drops,
// scheduling, workqueues, printk and machine checks. Missing ones (mce on a
// VM, printk:console on old kernels) are left out by whoever enables them.
const std::vector<std::string>& BaseEventSet();

// The base set plus every tracepoint of the NIC-driver groups present under
// `events_dir` (the nic collector's list: mlx5, ice, bnxt_en, ...).
std::vector<std::string> NodeEventSet(const std::string& events_dir);

// A tracefs instance's control files: which of `events` exist, enabling them
// and reading the instance's own accounting.
class Instance {
 public:
  explicit Instance(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }

  // Enables each of `events` that exists; the ones that do not go to the
  // returned list's complement (*missing).
  Result<std::vector<std::string>> EnableEvents(const std::vector<std::string>& events,
                                                std::vector<std::string>* missing);
  Status DisableAllEvents();
  Status SetTracingOn(bool on);
  Status SetClock(std::string_view clock);
  Status SetBufferSizeKb(uint64_t kb);
  // One write to the instance's trace_marker (a line; the newline is added).
  Status WriteMarker(std::string_view text);

 private:
  Status Write(const std::string& file, std::string_view value);
  std::string dir_;
};

}  // namespace gpunoise::blackbox
