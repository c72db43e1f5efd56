#include "common/background_task.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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
