#include "integration/support/workloads.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace gpunoise::testing {
namespace {

void PinSelf(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

uint64_t VoluntarySwitches() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return static_cast<uint64_t>(ru.ru_nvcsw);
}

}  // namespace

PingPongResult RunPingPong(int cpu_a, int cpu_b, uint64_t round_trips,
                           std::chrono::milliseconds time_limit, const std::string& ping_name,
                           const std::string& pong_name) {
  int a_to_b[2], b_to_a[2];
  if (pipe(a_to_b) != 0 || pipe(b_to_a) != 0) throw std::runtime_error("pipe");
  PingPongResult result;
  std::atomic<bool> stop{false};
  auto deadline = std::chrono::steady_clock::now() + time_limit;

  std::thread pong([&] {
    pthread_setname_np(pthread_self(), pong_name.c_str());
    PinSelf(cpu_b);
    result.pong_tid = static_cast<pid_t>(syscall(SYS_gettid));
    uint64_t start = VoluntarySwitches();
    char c;
    while (read(a_to_b[0], &c, 1) == 1) {
      if (c == 'q') break;
      if (write(b_to_a[1], &c, 1) != 1) break;
    }
    result.pong_switches = VoluntarySwitches() - start;
  });
  std::thread ping([&] {
    pthread_setname_np(pthread_self(), ping_name.c_str());
    PinSelf(cpu_a);
    result.ping_tid = static_cast<pid_t>(syscall(SYS_gettid));
    uint64_t start = VoluntarySwitches();
    char c = 'p';
    uint64_t i = 0;
    for (; i < round_trips && !stop; ++i) {
      if (write(a_to_b[1], &c, 1) != 1 || read(b_to_a[0], &c, 1) != 1) break;
      if ((i & 1023) == 0 && std::chrono::steady_clock::now() > deadline) break;
    }
    result.round_trips = i;
    c = 'q';
    (void)!write(a_to_b[1], &c, 1);
    result.ping_switches = VoluntarySwitches() - start;
  });
  ping.join();
  pong.join();
  for (int fd : {a_to_b[0], a_to_b[1], b_to_a[0], b_to_a[1]}) close(fd);
  return result;
}

ChildProcess::ChildProcess(std::vector<std::string> argv) {
  int err[2], out[2];
  if (pipe2(err, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  pid_ = fork();
  if (pid_ == 0) {
    // Its own process group, so that killing the group also takes down
    // what it started (`timeout`, `sh -c` loops) and no busy loop outlives
    // the test; and it dies with the test binary.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(err[1], 2);
    dup2(out[1], 1);
    // Do not inherit the test's blocked signals.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(err[1]);
  close(out[1]);
  stderr_fd_ = err[0];
  stdout_fd_ = out[0];
  fcntl(stderr_fd_, F_SETFL, O_NONBLOCK);
  fcntl(stdout_fd_, F_SETFL, O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) kill(-pid_, SIGKILL);  // the whole group, also after the leader exited
  if (!exited_ && pid_ > 0) waitpid(pid_, nullptr, 0);
  if (stderr_fd_ >= 0) close(stderr_fd_);
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

void ChildProcess::Pump(int timeout_ms) {
  pollfd fds[2] = {{stderr_fd_, POLLIN, 0}, {stdout_fd_, POLLIN, 0}};
  poll(fds, 2, timeout_ms);
  char buf[4096];
  ssize_t n;
  while ((n = read(stderr_fd_, buf, sizeof(buf))) > 0) stderr_.append(buf, static_cast<size_t>(n));
  while ((n = read(stdout_fd_, buf, sizeof(buf))) > 0) stdout_.append(buf, static_cast<size_t>(n));
}

bool ChildProcess::WaitForStderr(const std::string& needle, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    Pump(50);
    if (stderr_.find(needle) != std::string::npos) return true;
    int status;
    if (!exited_ && waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      status_ = status;
      Pump(0);
      return stderr_.find(needle) != std::string::npos;
    }
  }
  return false;
}

void ChildProcess::Signal(int sig) {
  if (!exited_) kill(pid_, sig);
}

int ChildProcess::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exited_) {
    Pump(50);
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      status_ = status;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      exited_ = true;
    }
  }
  Pump(0);
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  return 128 + WTERMSIG(status_);
}

std::string ChildProcess::stderr_text() {
  Pump(0);
  return stderr_;
}
std::string ChildProcess::stdout_text() {
  Pump(0);
  return stdout_;
}

std::string FindTraceProcessor() {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/opt/perfetto/bin"}) {
    std::string path = std::string(dir) + "/trace_processor_shell";
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return {};
}

std::string GpunoiseBinary() {
  const char* bin = std::getenv("GPUNOISE_BIN");
  return bin ? bin : GPUNOISE_BIN_DEFAULT;
}

namespace {
// MakeTempDir's directories, removed with everything in them when the test
// process exits (ctest runs each test in a process of its own), also after a
// failed assertion; GN_KEEP_TRACES=1 keeps them. A forked child that calls
// exit() removes nothing: the directories are its parent's.
class TempDirsRemovedAtExit {
 public:
  ~TempDirsRemovedAtExit() {
    if (::getpid() != owner_ || std::getenv("GN_KEEP_TRACES")) return;
    std::lock_guard lock(mutex_);
    for (const auto& dir : dirs_) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  }
  void Add(std::string dir) {
    std::lock_guard lock(mutex_);
    dirs_.push_back(std::move(dir));
  }

 private:
  const pid_t owner_ = ::getpid();
  std::mutex mutex_;
  std::vector<std::string> dirs_;
};
}  // namespace

std::string MakeTempDir() {
  static TempDirsRemovedAtExit removed_at_exit;
  char tmpl[] = "/tmp/gpunoise-test-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp /tmp/gpunoise-test-XXXXXX failed");
  removed_at_exit.Add(tmpl);
  return tmpl;
}

namespace {
std::vector<std::string> LoadedGpunoiseProgramsOnce(pid_t owner);
}  // namespace

std::vector<std::string> LoadedGpunoisePrograms(pid_t owner) {
  // The kernel frees a closed program after an RCU grace period, so one that
  // is on its way out can still be listed, with no holder, for a moment.
  std::vector<std::string> found;
  for (int attempt = 0; attempt < 15; ++attempt) {
    found = LoadedGpunoiseProgramsOnce(owner);
    if (found.empty()) break;
    usleep(200 * 1000);
  }
  return found;
}

namespace {
std::vector<std::string> LoadedGpunoiseProgramsOnce(pid_t owner) {
  // `bpftool prog show` prints each program on a few lines; the first names
  // it, a later "pids comm(PID)" line lists the processes holding it.
  std::vector<std::string> found;
  FILE* p = popen("bpftool prog show 2>/dev/null", "r");
  if (!p) return found;
  std::vector<std::string> lines;
  char buf[1024];
  while (fgets(buf, sizeof(buf), p)) lines.emplace_back(buf);
  pclose(p);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(" name gn_") == std::string::npos) continue;
    std::string pids;
    for (size_t j = i + 1; j < lines.size() && (lines[j][0] == ' ' || lines[j][0] == '\t'); ++j)
      if (lines[j].find("pids ") != std::string::npos) pids = lines[j];
    bool orphan = pids.empty();
    bool ours = owner > 0 && pids.find("(" + std::to_string(owner) + ")") != std::string::npos;
    // Programs held by other live processes belong to someone else (another
    // test run); unowned ones (pinned, leaked) or our own are what we check.
    if (orphan || ours) found.push_back(lines[i]);
  }
  return found;
}
}  // namespace

}  // namespace gpunoise::testing
