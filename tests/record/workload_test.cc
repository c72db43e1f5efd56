#include "record/workload.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>

#include <fstream>
#include <sstream>

namespace gpunoise::record {
namespace {

bool WaitExit(Workload& w, int timeout_ms) {
  pollfd p{w.exit_fd(), POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) != 1) return false;
  return w.Poll();
}

std::string TempFile() {
  char tmpl[] = "/tmp/gpunoise-workload-test-XXXXXX";
  int fd = mkstemp(tmpl);
  close(fd);
  return tmpl;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Workload, ExitStatusComesBackThroughThePidfd) {
  WorkloadSpec spec;
  spec.argv = {"sh", "-c", "exit 3"};
  auto w = Workload::Start(spec);
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_TRUE(WaitExit(**w, 5000));
  EXPECT_EQ((*w)->DescribeExit(), "exited with status 3");
  EXPECT_EQ((*w)->ShellStatus(), 3);
}

TEST(Workload, DeathBySignalIsNamed) {
  WorkloadSpec spec;
  spec.argv = {"sh", "-c", "kill -SEGV $$"};
  auto w = Workload::Start(spec);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(WaitExit(**w, 5000));
  EXPECT_EQ((*w)->DescribeExit(), "killed by SIGSEGV");
  EXPECT_EQ((*w)->ShellStatus(), 128 + SIGSEGV);
}

TEST(Workload, MissingCommandFailsAtStart) {
  WorkloadSpec spec;
  spec.argv = {"/nonexistent/train.py"};
  auto w = Workload::Start(spec);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message, "failed to start /nonexistent/train.py: No such file or directory");
}

TEST(Workload, GetsTheCaptureEnvironmentAndAnOrdinarySignalMask) {
  // The recorder blocks its stop signals; the command must not inherit that.
  sigset_t block, saved;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &saved);
  std::string out = TempFile();
  WorkloadSpec spec;
  spec.argv = {"sh", "-c", "echo \"$GPUNOISE_GPU_DIR\" > " + out + "; grep SigBlk /proc/self/status >> " + out};
  spec.env = {{"GPUNOISE_GPU_DIR", "/tmp/fragments"}};
  auto w = Workload::Start(spec);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(WaitExit(**w, 5000));
  EXPECT_EQ(ReadAll(out), "/tmp/fragments\nSigBlk:\t0000000000000000\n");
  unlink(out.c_str());
}

TEST(Workload, RunsAsTheGivenUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to change user";
  std::string out = TempFile();
  chmod(out.c_str(), 0666);
  WorkloadSpec spec;
  spec.argv = {"sh", "-c", "id -u > " + out + "; id -g >> " + out};
  spec.uid = 65534;
  spec.gid = 65534;
  auto w = Workload::Start(spec);
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_TRUE(WaitExit(**w, 5000));
  EXPECT_EQ((*w)->ShellStatus(), 0);
  EXPECT_EQ(ReadAll(out), "65534\n65534\n");
  unlink(out.c_str());
}

TEST(Workload, SudoInvokerComesFromSudosVariables) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can be under sudo";
  setenv("SUDO_UID", "1000", 1);
  setenv("SUDO_GID", "1001", 1);
  setenv("SUDO_USER", "alice", 1);
  auto spec = SudoInvoker();
  unsetenv("SUDO_UID");
  unsetenv("SUDO_GID");
  unsetenv("SUDO_USER");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->uid, 1000);
  EXPECT_EQ(spec->gid, 1001);
  EXPECT_EQ(spec->user_name, "alice");
  EXPECT_FALSE(SudoInvoker());
}

}  // namespace
}  // namespace gpunoise::record
