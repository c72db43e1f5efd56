// The injection library never hurts its host: fake_cuda_app (a stand-in CUDA
// program) run with libgpunoise_cupti.so and the stand-in libcupti, next to
// the same program run without it. Under a full disk, an unwritable
// directory, a storm of SIGTERMs (with the default action and with the
// program's own handler) and a final flush that hangs, the program's exit
// status and stdout are what they are without the library, its stderr gains
// at most one line, and its exit is held for at most the bounded flush wait.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "integration/support/privileges.h"
#include "model/gpu_capture.h"

namespace gpunoise::cupti {
namespace {

using Clock = std::chrono::steady_clock;

struct AppRun {
  int status = 0;
  std::string out, err;
  double seconds = 0;  // from start to exit
};

std::string TempDir() {
  char tmpl[] = "/tmp/gpunoise-host-test-XXXXXX";
  return mkdtemp(tmpl);
}

void RemoveAll(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") unlink((dir + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

struct RemoveWhenDone {
  std::string dir;
  ~RemoveWhenDone() { RemoveAll(dir); }
};

size_t CountFragments(const std::string& dir) {
  size_t n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (model::ParseFragmentFileName(e->d_name)) ++n;
    closedir(d);
  }
  return n;
}

// The environment `gpunoise record -- CMD` gives a program, with the
// stand-in libcupti; empty `dir`: no injection at all.
std::vector<std::string> CaptureEnv(const std::string& dir) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  if (dir.empty()) return env;
  env.push_back(std::string(model::kCudaInjectionEnv) + "=" + GPUNOISE_CUPTI_LIB);
  env.push_back(std::string(model::kGpuDirEnv) + "=" + dir);
  env.push_back(std::string(model::kCuptiPathEnv) + "=" + FAKE_CUPTI_LIB);
  env.push_back(std::string(model::kGpuFlushMsEnv) + "=50");
  return env;
}

// Runs fake_cuda_app with `args` and `env`. `in_child` runs in the child
// before exec (false: exit 99); `while_running` gets the pid meanwhile.
AppRun RunApp(const std::vector<std::string>& args, std::vector<std::string> env,
              const std::function<bool()>& in_child = {},
              const std::function<void(pid_t)>& while_running = {}) {
  int out_pipe[2], err_pipe[2];
  EXPECT_EQ(pipe2(out_pipe, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err_pipe, O_CLOEXEC), 0);
  std::vector<std::string> argv_s = {FAKE_CUDA_APP};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  auto start = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    if (in_child && !in_child()) _exit(99);
    execve(argv[0], argv.data(), envp.data());
    _exit(98);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  std::thread poker;
  if (while_running) poker = std::thread([&] { while_running(pid); });
  AppRun r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, 20000) <= 0) break;  // the test's own bound
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  waitpid(pid, &r.status, 0);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (poker.joinable()) poker.join();
  return r;
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// A private mount namespace with a tmpfs of `options` at `dir`, which goes
// away with the child (no mount is ever left behind). Runs in the child.
bool PrivateTmpfs(const std::string& dir, const char* options, unsigned long flags) {
  if (unshare(CLONE_NEWNS) != 0) return false;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
  return mount("tmpfs", dir.c_str(), "tmpfs", flags, options) == 0;
}

// Fills the filesystem at `dir` to the last byte.
bool FillUp(const std::string& dir) {
  int fd = open((dir + "/filler").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  char block[4096] = {};
  while (write(fd, block, sizeof(block)) > 0) {
  }
  while (write(fd, block, 1) > 0) {
  }
  bool full = errno == ENOSPC;
  close(fd);
  return full;
}

void RequireRootForMounts() {
  if (!testing::IsRoot()) {
    if (testing::RootTestsRequired()) FAIL() << "a private tmpfs needs root";
    GTEST_SKIP() << "a private tmpfs needs root";
  }
  GN_REQUIRE_ROOT_MOUNT_POINT("a private tmpfs");
}

// Sends `count` SIGTERMs to `pid` as fast as it can, after `delay`.
std::function<void(pid_t)> SigtermStorm(int count, std::chrono::milliseconds delay) {
  return [count, delay](pid_t pid) {
    std::this_thread::sleep_for(delay);
    for (int i = 0; i < count; ++i)
      if (kill(pid, SIGTERM) != 0) break;  // gone
  };
}

TEST(InjectionHost, FullDiskCostsTheProgramOneLineAndNothingElse) {
  RequireRootForMounts();
  if (HasFatalFailure() || IsSkipped()) return;
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  auto full_disk = [&] { return PrivateTmpfs(dir, "size=16k,mode=0700", 0) && FillUp(dir); };
  AppRun without = RunApp({"--seconds", "0.5", "--say"}, CaptureEnv(""), full_disk);
  AppRun with = RunApp({"--seconds", "0.5", "--say"}, CaptureEnv(dir), full_disk);
  ASSERT_TRUE(WIFEXITED(without.status) && WEXITSTATUS(without.status) == 0) << without.err;
  EXPECT_EQ(with.status, without.status) << with.err;
  EXPECT_EQ(with.out, without.out);
  EXPECT_EQ(with.out, "fake_cuda_app: started\nfake_cuda_app: finished\n");
  // Every flush failed (periodic and final): said once.
  EXPECT_EQ(Lines(with.err), 1) << with.err;
  EXPECT_NE(with.err.find("GPU trace data lost"), std::string::npos) << with.err;
  EXPECT_NE(with.err.find("No space left on device"), std::string::npos) << with.err;
  EXPECT_LT(with.seconds, without.seconds + 1.0);
}

TEST(InjectionHost, UnwritableDirectoryCostsTheProgramOneLine) {
  RequireRootForMounts();
  if (HasFatalFailure() || IsSkipped()) return;
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  auto read_only = [&] { return PrivateTmpfs(dir, "size=16k", MS_RDONLY); };
  AppRun without = RunApp({"--seconds", "0.2", "--say"}, CaptureEnv(""), read_only);
  AppRun with = RunApp({"--seconds", "0.2", "--say"}, CaptureEnv(dir), read_only);
  EXPECT_EQ(with.status, without.status) << with.err;
  EXPECT_EQ(with.out, without.out);
  EXPECT_EQ(Lines(with.err), 1) << with.err;
  EXPECT_NE(with.err.find("GPU capture off: cannot write to " + dir), std::string::npos) << with.err;
}

// A pod's directory the node agent never handed over: root's, 0700. The
// program runs as uid 65534, captures, holds its data back and at exit
// says the held data was not written; its output is unchanged.
TEST(InjectionHost, ADirectoryNeverHandedOverIsSaidAtExitAndTheProgramUnchanged) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the program as uid 65534";
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  auto as_nobody = [] { return ::setgid(65534) == 0 && ::setuid(65534) == 0; };
  AppRun without = RunApp({"--seconds", "0.3", "--say"}, CaptureEnv(""), as_nobody);
  AppRun with = RunApp({"--seconds", "0.3", "--say"}, CaptureEnv(dir), as_nobody);
  EXPECT_EQ(with.status, without.status) << with.err;
  EXPECT_EQ(with.out, without.out);
  EXPECT_NE(with.err.find("cannot write to " + dir + " yet (Permission denied)"), std::string::npos) << with.err;
  EXPECT_NE(with.err.find("GPU trace data lost: " + dir + " never became writable"), std::string::npos) << with.err;
  EXPECT_EQ(CountFragments(dir), 0u);
}

TEST(InjectionHost, SigtermStormStillKillsTheProgramWithItsOutputUnchanged) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  auto storm = SigtermStorm(300, std::chrono::milliseconds(300));
  AppRun without = RunApp({"--seconds", "5", "--say"}, CaptureEnv(""), {}, storm);
  AppRun with = RunApp({"--seconds", "5", "--say"}, CaptureEnv(dir), {}, storm);
  ASSERT_TRUE(WIFSIGNALED(without.status) && WTERMSIG(without.status) == SIGTERM);
  ASSERT_TRUE(WIFSIGNALED(with.status)) << with.status << " " << with.err;
  EXPECT_EQ(WTERMSIG(with.status), SIGTERM);
  EXPECT_EQ(with.out, without.out);
  EXPECT_EQ(with.out, "fake_cuda_app: started\n");
  EXPECT_EQ(with.err, "");
  // Dead well before its 5 s were up: the final flush waited for, not the program.
  EXPECT_LT(with.seconds, 0.3 + 2.5);
  // The final flush wrote its chunk before the signal was let through.
  EXPECT_GE(CountFragments(dir), 1u);
}

TEST(InjectionHost, SigtermStormWithTheProgramsHandlerLeavesItsChoice) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  auto storm = SigtermStorm(300, std::chrono::milliseconds(300));
  AppRun without = RunApp({"--seconds", "5", "--say", "--handle-term"}, CaptureEnv(""), {}, storm);
  AppRun with = RunApp({"--seconds", "5", "--say", "--handle-term"}, CaptureEnv(dir), {}, storm);
  ASSERT_TRUE(WIFEXITED(without.status) && WEXITSTATUS(without.status) == 3) << without.err;
  EXPECT_EQ(with.status, without.status) << with.err;
  EXPECT_EQ(with.out, without.out);
  EXPECT_EQ(with.out, "fake_cuda_app: started\nfake_cuda_app: stopping on SIGTERM\n");
  EXPECT_EQ(with.err, "");
  // The signals asked for flushes, one per 100 ms at most, not one each; the
  // program's exit wrote the last.
  size_t fragments = CountFragments(dir);
  EXPECT_GE(fragments, 1u);
  EXPECT_LE(fragments, 1 + static_cast<size_t>(with.seconds / 0.05) + 1);
}

TEST(InjectionHost, ExitFlushIsBoundedWhenCuptiHangs) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  std::vector<std::string> env = CaptureEnv(dir);
  env.push_back("FAKE_CUPTI_FORCED_FLUSH_HANG_MS=30000");
  AppRun with = RunApp({"--seconds", "0.2", "--say"}, env);
  ASSERT_TRUE(WIFEXITED(with.status)) << with.err;
  EXPECT_EQ(WEXITSTATUS(with.status), 0);
  EXPECT_EQ(with.out, "fake_cuda_app: started\nfake_cuda_app: finished\n");
  EXPECT_EQ(Lines(with.err), 1) << with.err;
  EXPECT_NE(with.err.find("final flush did not finish within 2000 ms"), std::string::npos) << with.err;
  EXPECT_LT(with.seconds, 0.2 + 2.0 + 1.0) << "the exit waited for CUPTI for longer than the bound";
  EXPECT_GT(with.seconds, 0.2 + 1.9) << "the exit did not wait for the final flush";
}

TEST(InjectionHost, FatalSignalWithAHangingFlushStillKillsWithinTheBound) {
  std::string dir = TempDir();
  RemoveWhenDone cleanup{dir};
  std::vector<std::string> env = CaptureEnv(dir);
  env.push_back("FAKE_CUPTI_FORCED_FLUSH_HANG_MS=30000");
  AppRun with = RunApp({"--seconds", "10", "--say"}, env, {}, SigtermStorm(50, std::chrono::milliseconds(200)));
  ASSERT_TRUE(WIFSIGNALED(with.status)) << with.status << " " << with.err;
  EXPECT_EQ(WTERMSIG(with.status), SIGTERM);
  EXPECT_EQ(with.out, "fake_cuda_app: started\n");
  EXPECT_LT(with.seconds, 0.2 + 2.0 + 1.0);
}

}  // namespace
}  // namespace gpunoise::cupti
