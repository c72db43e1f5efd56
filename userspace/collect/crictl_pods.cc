#include "collect/crictl_pods.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/json_value.h"
#include "common/strings.h"
#include "common/unique_fd.h"

extern char** environ;

namespace gpunoise::collect {
namespace {

constexpr size_t kMaxOutput = 16u << 20;
// crictl answers from the runtime in milliseconds; a hung socket must not
// hold a recording's start.
constexpr std::chrono::milliseconds kCrictlTimeout{2000};

}  // namespace

Result<size_t> AddCrictlPods(std::string_view json, KubeletPods* pods) {
  GN_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(json));
  if (!doc["items"].is_array()) return MakeError("crictl pods: no \"items\" array");
  size_t n = 0;
  for (const JsonValue& item : doc["items"].items()) {
    const JsonValue& m = item["metadata"];
    if (pods->AddPod(m["uid"].String(), m["name"].String(), m["namespace"].String())) ++n;
  }
  return n;
}

Result<size_t> AddCrictlContainers(std::string_view json, KubeletPods* pods) {
  GN_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(json));
  if (!doc["containers"].is_array()) return MakeError("crictl ps: no \"containers\" array");
  size_t n = 0;
  for (const JsonValue& c : doc["containers"].items()) {
    const JsonValue& labels = c["labels"];
    if (pods->AddContainer(c["id"].String(), c["metadata"]["name"].String(),
                           labels["io.kubernetes.pod.name"].String(), labels["io.kubernetes.pod.namespace"].String()))
      ++n;
  }
  return n;
}

std::optional<std::string> FindOnPath(std::string_view name, const char* path_env) {
  if (!path_env) return std::nullopt;
  for (std::string_view dir : Split(path_env, ':')) {
    if (dir.empty() || dir.front() != '/') continue;  // a relative PATH entry is the cwd's: never for root
    std::string candidate = std::string(dir) + "/" + std::string(name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

Result<std::string> RunBounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return MakeError("pipe: {}", std::strerror(errno));
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return MakeError("failed to run {}: {}", argv[0], std::strerror(rc));
  write_end.Reset();
  std::string out;
  bool timed_out = false;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{read_end.get(), POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char buf[65536];
    ssize_t got = ::read(read_end.get(), buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    out.append(buf, static_cast<size_t>(got));
    if (out.size() > kMaxOutput) {
      timed_out = true;  // as bad: stop it
      break;
    }
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return MakeError("{} did not finish within {} ms (or wrote too much)", argv[0], timeout.count());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return MakeError("{} {} failed (status {})", argv[0], argv.size() > 1 ? argv[1] : "", status);
  return out;
}

Status AddCrictlNames(KubeletPods* pods) {
  auto crictl = FindOnPath("crictl", std::getenv("PATH"));
  if (!crictl) return OkStatus();
  GN_ASSIGN_OR_RETURN(std::string pods_json, RunBounded({*crictl, "pods", "-o", "json"}, kCrictlTimeout));
  GN_ASSIGN_OR_RETURN(std::string ps_json, RunBounded({*crictl, "ps", "-a", "-o", "json"}, kCrictlTimeout));
  KubeletPods merged = *pods;
  GN_RETURN_IF_ERROR(AddCrictlPods(pods_json, &merged));
  GN_RETURN_IF_ERROR(AddCrictlContainers(ps_json, &merged));
  *pods = std::move(merged);
  return OkStatus();
}

}  // namespace gpunoise::collect
