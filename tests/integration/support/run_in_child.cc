#include "integration/support/run_in_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>

#include "common/unique_fd.h"

namespace gpunoise::testing::internal {

pid_t ForkWithPipe(int* fd) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return -1;
  }
  if (child == 0) {
    ::close(fds[0]);
    ::setsid();  // its own session: killed as one, and its own autogroup
    *fd = fds[1];
    return 0;
  }
  ::close(fds[1]);
  *fd = fds[0];
  return child;
}

void FinishChild(int fd, const void* data, size_t size, bool ok) {
  if (!ok) ::_exit(2);
  ssize_t n = ::write(fd, data, size);
  ::_exit(n == static_cast<ssize_t>(size) ? 0 : 1);
}

bool CollectFromChild(pid_t child, int fd, void* out, size_t size, std::chrono::milliseconds timeout) {
  UniqueFd in(fd);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t got = 0;
  bool timed_out = false;
  while (got < size) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{in.get(), POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    ssize_t n = ::read(in.get(), static_cast<char*>(out) + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed the pipe early (it failed)
    got += static_cast<size_t>(n);
  }
  if (timed_out) {
    ::kill(-child, SIGKILL);  // its session, grandchildren included
    ::kill(child, SIGKILL);   // in case it had not called setsid yet
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return !timed_out && got == size && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace gpunoise::testing::internal
