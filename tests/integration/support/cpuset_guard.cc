#include "integration/support/cpuset_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::testing {
namespace {

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// What the guard does, also when the test crashed: tasks back to the root
// cpuset, the directory removed, the root's balancing as it was.
void Restore(const std::string& root, const std::string& dir, const std::string& old_balance) {
  for (int i = 0; i < 100; ++i) {
    auto procs = ReadFileToString(dir + "/cgroup.procs");
    if (procs.ok()) {
      std::istringstream in(*procs);
      std::string pid;
      while (in >> pid) WriteText(root + "/cgroup.procs", pid);
    }
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  WriteText(root + "/cpuset.sched_load_balance", old_balance);
}

}  // namespace

UnbalancedCpuset::UnbalancedCpuset(const std::string& name) {
  root_ = "/sys/fs/cgroup/cpuset";
  auto balance = ReadFileToString(root_ + "/cpuset.sched_load_balance");
  auto cpus = ReadFileToString(root_ + "/cpuset.cpus");
  auto mems = ReadFileToString(root_ + "/cpuset.mems");
  if (!balance.ok() || !cpus.ok() || !mems.ok()) {
    error_ = "no v1 cpuset hierarchy at " + root_;
    return;
  }
  std::string old_balance(Trim(*balance));
  dir_ = root_ + "/" + name;
  if (::mkdir(dir_.c_str(), 0755) != 0) {
    error_ = "failed to create " + dir_;
    dir_.clear();
    return;
  }
  int fds[2];
  // Close-on-exec: the recorder the test starts must not keep the guard waiting.
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error_ = "pipe";
    Restore(root_, dir_, old_balance);
    return;
  }
  guard_ = ::fork();
  if (guard_ == 0) {
    ::close(fds[1]);
    char c;
    while (::read(fds[0], &c, 1) > 0) {
    }
    Restore(root_, dir_, old_balance);
    ::_exit(0);
  }
  ::close(fds[0]);
  guard_fd_ = fds[1];
  if (!WriteText(dir_ + "/cpuset.cpus", std::string(Trim(*cpus))) ||
      !WriteText(dir_ + "/cpuset.mems", std::string(Trim(*mems))) ||
      !WriteText(dir_ + "/cpuset.sched_load_balance", "0") ||
      !WriteText(root_ + "/cpuset.sched_load_balance", "0"))
    error_ = "failed to set up " + dir_ + " without load balancing";
}

UnbalancedCpuset::~UnbalancedCpuset() {
  if (guard_fd_ >= 0) ::close(guard_fd_);
  if (guard_ > 0) ::waitpid(guard_, nullptr, 0);
}

bool UnbalancedCpuset::Join(pid_t pid) const { return WriteText(dir_ + "/cgroup.procs", std::to_string(pid)); }

}  // namespace gpunoise::testing
