#include "record/workload.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>

#include "common/strings.h"

extern char** environ;

namespace gpunoise::record {

std::optional<WorkloadSpec> SudoInvoker() {
  if (::geteuid() != 0) return std::nullopt;
  const char* uid = std::getenv("SUDO_UID");
  const char* gid = std::getenv("SUDO_GID");
  if (!uid || !gid) return std::nullopt;
  auto u = ParseInt64(uid), g = ParseInt64(gid);
  if (!u || !g || *u <= 0 || *g < 0) return std::nullopt;
  WorkloadSpec spec;
  spec.uid = static_cast<int>(*u);
  spec.gid = static_cast<int>(*g);
  if (const char* user = std::getenv("SUDO_USER")) spec.user_name = user;
  return spec;
}

std::optional<WorkloadSpec> InvokingUser() {
  if (auto sudo = SudoInvoker()) return sudo;
  // A set-user-ID gpunoise: the command runs as the real user, who never
  // had root's rights.
  if (::getuid() == ::geteuid()) return std::nullopt;
  WorkloadSpec spec;
  spec.uid = static_cast<int>(::getuid());
  spec.gid = static_cast<int>(::getgid());
  if (const passwd* pw = ::getpwuid(::getuid())) spec.user_name = pw->pw_name;
  return spec;
}

namespace {

// In the child between fork and exec: only async-signal-safe calls. The
// error travels to the parent over a close-on-exec pipe.
[[noreturn]] void ChildFail(int fd, const char* what) {
  int err = errno;
  char msg[256];
  size_t n = 0;
  for (const char* p = what; *p && n < 120; ++p) msg[n++] = *p;
  msg[n++] = ':';
  msg[n++] = ' ';
  const char* reason = strerror(err);
  for (const char* p = reason; *p && n < sizeof(msg) - 1; ++p) msg[n++] = *p;
  (void)!::write(fd, msg, n);
  ::_exit(127);
}

}  // namespace

Result<std::unique_ptr<Workload>> Workload::Start(const WorkloadSpec& spec) {
  if (spec.argv.empty()) return MakeError("no command given after --");
  // Everything the child needs is built before fork.
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::map<std::string, std::string> env_map;
  std::vector<std::string> env_order;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string key = kv.substr(0, eq);
    if (!env_map.count(key)) env_order.push_back(key);
    env_map[key] = kv.substr(eq + 1);
  }
  for (const auto& [key, value] : spec.env) {
    if (!env_map.count(key)) env_order.push_back(key);
    env_map[key] = value;
  }
  std::vector<std::string> env_strings;
  for (const auto& key : env_order) env_strings.push_back(key + "=" + env_map[key]);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  // supplementary groups of the invoking user, resolved before fork
  std::vector<gid_t> groups;
  if (spec.uid >= 0 && !spec.user_name.empty()) {
    int n = 64;
    groups.resize(static_cast<size_t>(n));
    if (::getgrouplist(spec.user_name.c_str(), static_cast<gid_t>(spec.gid), groups.data(), &n) < 0) {
      groups.resize(static_cast<size_t>(n));
      ::getgrouplist(spec.user_name.c_str(), static_cast<gid_t>(spec.gid), groups.data(), &n);
    }
    groups.resize(static_cast<size_t>(std::max(n, 0)));
  }

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    return MakeError("failed to create a pipe: {}", std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return MakeError("failed to fork: {}", std::strerror(err));
  }
  if (pid == 0) {
    ::close(report[0]);
    // gpunoise blocks its stop signals (they arrive on a signalfd); the
    // command gets the ordinary mask and dispositions back.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
    // No capability survives the exec through the ambient set: the command
    // gets what its user has (none, for a user other than root; setuid
    // below clears the rest), never what gpunoise was given.
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    if (spec.uid >= 0) {
      if (::setgroups(groups.size(), groups.data()) != 0) ChildFail(report[1], "failed to set groups");
      if (::setgid(static_cast<gid_t>(spec.gid)) != 0) ChildFail(report[1], "failed to set gid");
      if (::setuid(static_cast<uid_t>(spec.uid)) != 0) ChildFail(report[1], "failed to set uid");
    }
    ::execvpe(argv[0], argv.data(), envp.data());
    ChildFail(report[1], argv[0]);
  }
  ::close(report[1]);
  std::unique_ptr<Workload> w(new Workload());
  w->pid_ = pid;
  char msg[256];
  ssize_t n;
  do {
    n = ::read(report[0], msg, sizeof(msg));
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n > 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    w->pid_ = -1;
    return MakeError("failed to start {}", std::string(msg, static_cast<size_t>(n)));
  }
  w->pidfd_.Reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!w->pidfd_.valid())
    return MakeError("failed to watch command (pid {}): pidfd_open: {}", pid, std::strerror(errno));
  return w;
}

Workload::~Workload() = default;

bool Workload::Poll() {
  if (exited_ || pid_ < 0) return exited_;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exited_ = true;
    status_ = status;
  }
  return exited_;
}

std::string Workload::DescribeExit() const {
  if (!exited_) return "";
  if (WIFEXITED(status_)) return "exited with status " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) {
    const char* name = sigabbrev_np(WTERMSIG(status_));
    return std::string("killed by SIG") + (name ? name : std::to_string(WTERMSIG(status_)).c_str());
  }
  return "ended";
}

int Workload::ShellStatus() const {
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return 1;
}

}  // namespace gpunoise::record
