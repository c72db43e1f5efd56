// The command `gpunoise record -- CMD ARGS...` runs: started once the
// collectors are attached, as the invoking user when gpunoise runs under
// sudo, with the GPU-capture environment added, and watched through a
// pidfd so its exit ends the recording.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gpunoise::record {

struct WorkloadSpec {
  std::vector<std::string> argv;
  // Added to (or replacing in) the environment gpunoise was started with.
  std::vector<std::pair<std::string, std::string>> env;
  // Run as this user (uid, gid and supplementary groups of `user_name`);
  // -1: keep gpunoise's own.
  int uid = -1;
  int gid = -1;
  std::string user_name;
};

// The user who ran `sudo gpunoise ...` (SUDO_UID, SUDO_GID, SUDO_USER), if
// gpunoise is root because of sudo.
std::optional<WorkloadSpec> SudoInvoker();
// SudoInvoker(), else the real user when gpunoise runs set-user-ID root;
// nullopt when gpunoise runs as the user who started it.
std::optional<WorkloadSpec> InvokingUser();

class Workload {
 public:
  // Forks and execs; an exec failure (no such command) is reported here,
  // not as an exit status later.
  static Result<std::unique_ptr<Workload>> Start(const WorkloadSpec& spec);
  ~Workload();

  pid_t pid() const { return pid_; }
  // Readable once the command has exited.
  int exit_fd() const { return pidfd_.get(); }
  // Reaps the command if it has exited; true then.
  bool Poll();
  bool exited() const { return exited_; }
  // "exited with status 0", "killed by SIGSEGV"; empty while running.
  std::string DescribeExit() const;
  // The status a shell would report: the exit code, or 128 + signal.
  int ShellStatus() const;

 private:
  Workload() = default;
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  bool exited_ = false;
  int status_ = 0;
};

}  // namespace gpunoise::record
