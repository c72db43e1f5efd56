// The node agent's per-pod GPU fragment directories
// (docs/deploy/kubernetes/README.md, "The per-pod directory"): under a
// root-owned ROOT, one directory per pod of the kubelet's log tree, named
// as the kubelet names the pod's log directory (<namespace>_<pod>_<uid>:
// readable, and unique across a pod's re-creations), created 0700 by the
// agent as soon as the pod's sandbox exists and handed to the uid:gid the
// pod's first container process runs as once that process appears. Pods
// running as any uid can then write fragments with no world-writable
// directory, and the recorder's fragment checks (record/gpu/gpu_fragments.h: files
// owned by their directory's owner) hold for each.
//
// Only root can create entries in ROOT (it must be owned by this process's
// euid and not writable by group or others), so what is found there was
// made by root: this agent, an earlier run of it, or kubelet creating a
// missing subPath. A symbolic link, a non-directory, a directory others can
// write into, or one owned by another uid than the pod's processes run as
// is refused, said once, and never read or handed over. Every check is on
// an fd opened with O_NOFOLLOW, relative to ROOT's own fd.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collect/kubelet_pods.h"
#include "common/result.h"
#include "common/unique_fd.h"

namespace gpunoise::collect {

struct PodDirsPass {
  size_t created = 0;  // directories made this pass
  size_t handed = 0;   // chowned to their pod's uid this pass
  size_t removed = 0;  // empty directories of pods that are gone
  std::vector<std::string> problems;  // "refusing ROOT/x: ...", each said once
};

// The user a process runs as (effective ids, /proc/PID/status), read through
// one fd of /proc/PID so that a pid reused between the reads is not mixed
// in; nullopt if the process went away.
struct ProcessOwner {
  uid_t uid = 0;
  gid_t gid = 0;
  uint64_t start_ticks = 0;  // /proc/PID/stat starttime: which process is first
};
std::optional<ProcessOwner> ReadProcessOwner(int proc_pid_dir_fd);

class PodFragmentDirs {
 public:
  // ROOT must exist, be a real directory owned by this process's euid and
  // not writable by group or others.
  static Result<PodFragmentDirs> Open(const std::string& root);

  // One pass: directories for new pods, hand-over for those whose first
  // container process has appeared (scanning `proc_root` only when some
  // wait), removal of empty directories of pods gone from the log tree.
  PodDirsPass Update(const KubeletPods& pods, const std::string& proc_root = "/proc");

  // The pod directories fragments may be read from (not the refused ones).
  std::vector<std::string> Directories() const;
  const std::string& root() const { return root_; }

  // The uid a directory was handed to, for tests and the summary; nullopt
  // while it waits (or for an unknown name).
  std::optional<uid_t> HandedTo(const std::string& name) const;

 private:
  struct Entry {
    dev_t dev = 0;
    ino_t ino = 0;
    uid_t owner = 0;       // as last checked
    bool handed = false;   // owned by the pod's uid (or the pod runs as root)
    bool refused = false;  // said once; never used
  };
  PodFragmentDirs(std::string root, UniqueFd fd) : root_(std::move(root)), root_fd_(std::move(fd)) {}
  // Creates or adopts `name`; false (with a problem line) if refused.
  void Ensure(const std::string& name, PodDirsPass* pass);
  void HandOver(const std::string& name, Entry& e, const ProcessOwner& owner, PodDirsPass* pass);
  // Opens `name` below ROOT without following a link and checks it is the
  // directory `e` remembers.
  Result<UniqueFd> Reopen(const std::string& name, const Entry& e) const;

  std::string root_;
  UniqueFd root_fd_;
  uid_t euid_ = 0;
  std::map<std::string, Entry> dirs_;       // by directory name
  std::map<std::string, std::string> uid_;  // pod uid -> directory name
};

}  // namespace gpunoise::collect
