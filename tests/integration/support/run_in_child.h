// Runs a piece of a test in a forked child process and hands back the plain
// struct it filled: the workloads that need a process of their own (their
// own session and autogroup weight, a cgroup or cpuset to join, threads
// pinned and renamed) without leaving anything behind in the test process.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>

#include <unistd.h>

namespace gpunoise::testing {

namespace internal {

// Parent side: reads `size` bytes from `fd` until then, waits for `child`
// and reaps it. Past `timeout` the child's session is killed. True only when
// all `size` bytes came and the child exited 0.
bool CollectFromChild(pid_t child, int fd, void* out, size_t size, std::chrono::milliseconds timeout);

// Child side: writes the result and ends the process (never returns).
[[noreturn]] void FinishChild(int fd, const void* data, size_t size, bool ok);

// fork() with a pipe from child to parent; in the child (returns 0) `*fd`
// is the write end and the child has its own session; in the parent the
// read end. -1 on failure.
pid_t ForkWithPipe(int* fd);

}  // namespace internal

// Runs `body(T&)` in a child process of its own session (setsid) and returns
// the T it filled; nullopt when `body` returned false, the child died or
// it ran past `timeout` (its session is then killed). T is copied as bytes:
// plain data only.
template <typename T, typename Body>
std::optional<T> RunInChild(Body&& body, std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  static_assert(std::is_trivially_copyable_v<T>, "the result crosses a pipe as bytes");
  int fd = -1;
  pid_t child = internal::ForkWithPipe(&fd);
  if (child < 0) return std::nullopt;
  if (child == 0) {
    T r{};
    bool ok = std::forward<Body>(body)(r);
    internal::FinishChild(fd, &r, sizeof(r), ok);
  }
  T r{};
  if (!internal::CollectFromChild(child, fd, &r, sizeof(r), timeout)) return std::nullopt;
  return r;
}

}  // namespace gpunoise::testing
