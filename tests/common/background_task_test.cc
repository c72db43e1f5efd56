#include "common/background_task.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "common/capabilities.h"

namespace gpunoise {
namespace {

struct Seen {
  pid_t tid = 0;
  int nice = 0;
  CapMask effective = ~CapMask{0};
};

// The recorder's drain polls for what a task found; the task runs beside it,
// holding no capability and below the node's own work.
TEST(BackgroundTask, RunsOnAThreadOfItsOwnWithoutCapabilitiesAndAtNice10) {
  const int own_nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
  BackgroundTask<Seen> task([] {
    Seen s;
    s.tid = ::gettid();
    errno = 0;
    s.nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
    if (auto caps = CurrentCapabilities(); caps.ok()) s.effective = caps->effective;
    return s;
  });
  const Seen* seen = nullptr;
  for (int i = 0; i < 10000 && !seen; ++i)
    if (!(seen = task.TryGet())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_NE(seen, nullptr);
  EXPECT_NE(seen->tid, ::gettid());
  EXPECT_EQ(seen->nice, 10);
  EXPECT_EQ(seen->effective, 0u);
  EXPECT_EQ(&task.Get(), seen);
  // The caller's own thread keeps what it had.
  EXPECT_EQ(::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid())), own_nice);
}

// What /proc says a thread of this process holds.
struct ThreadStatus {
  CapMask effective = 0, bounding = 0;
  bool no_new_privs = false;
};
ThreadStatus StatusOf(pid_t tid) {
  ThreadStatus t;
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/status");
  std::string key;
  while (in >> key) {
    std::string value;
    in >> value;
    if (key == "CapEff:") t.effective = std::stoull(value, nullptr, 16);
    if (key == "CapBnd:") t.bounding = std::stoull(value, nullptr, 16);
    if (key == "NoNewPrivs:") t.no_new_privs = value == "1";
    std::getline(in, value);
  }
  return t;
}

// A task started by a thread that still holds capabilities (the recorder
// starts two just before it drops its own) is never seen holding them once
// its constructor returned: checked right away, many times, since a new
// thread usually runs only after its creator's time slice.
TEST(BackgroundTask, ATaskStartedWithCapabilitiesHoldsNoneOnceStarted) {
  if (!ThisThreadHoldsCapabilities()) GTEST_SKIP() << "needs capabilities to start with";
  for (int round = 0; round < 20; ++round) {
    std::atomic<pid_t> tid{0};
    std::atomic<bool> release{false};
    std::set<pid_t> before;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
      before.insert(std::stoi(e.path().filename()));
    BackgroundTask<int> task([&] {
      tid = ::gettid();
      while (!release) std::this_thread::sleep_for(std::chrono::microseconds(100));
      return 0;
    });
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
      pid_t t = std::stoi(e.path().filename());
      if (before.count(t)) continue;
      ThreadStatus s = StatusOf(t);
      EXPECT_EQ(s.effective, 0u) << "round " << round << ": thread " << t;
      EXPECT_EQ(s.bounding, 0u) << "round " << round << ": thread " << t;
      EXPECT_TRUE(s.no_new_privs) << "round " << round << ": thread " << t;
    }
    release = true;
    task.Get();
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(BackgroundTask, GetWaitsForTheWork) {
  BackgroundTask<int> task([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return 7;
  });
  EXPECT_EQ(task.Get(), 7);
  EXPECT_EQ(*task.TryGet(), 7);
}

// Where no thread can be had (a process at its thread limit), the work runs
// in the caller: the recorder degrades to pausing, not to failing.
TEST(BackgroundTask, WithoutAThreadToBeHadTheWorkRunsInTheCaller) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // RLIMIT_NPROC binds neither root nor a holder of CAP_SYS_RESOURCE: as
    // nobody, no new task can start.
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    rlimit none{0, 0};
    if (::setrlimit(RLIMIT_NPROC, &none) != 0) ::_exit(3);
    const pid_t caller = ::gettid();
    BackgroundTask<pid_t> task([] { return ::gettid(); });
    const pid_t* ran_on = task.TryGet();
    ::_exit(ran_on && *ran_on == caller ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "needs root to become nobody";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace gpunoise
