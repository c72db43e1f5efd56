// A v1 cpuset without load balancing, for tests that need the scheduler not
// to move a thread to an idle CPU: the test's cpuset gets
// cpuset.sched_load_balance=0, and so does the root cpuset (v1 balances
// every CPU in one domain while the root's flag is 1, whatever its children
// say). A guard process restores the root's flag and removes the cpuset
// when this object goes or the test process dies in any way (the guard
// waits on a pipe only the test holds), so the node never stays unbalanced.
#pragma once

#include <sys/types.h>

#include <string>

namespace gpunoise::testing {

class UnbalancedCpuset {
 public:
  explicit UnbalancedCpuset(const std::string& name);
  ~UnbalancedCpuset();
  UnbalancedCpuset(const UnbalancedCpuset&) = delete;
  UnbalancedCpuset& operator=(const UnbalancedCpuset&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  bool Join(pid_t pid) const;

 private:
  std::string root_, dir_, error_;
  pid_t guard_ = -1;
  int guard_fd_ = -1;
};

}  // namespace gpunoise::testing
