#include "collect/pod_fragment_dirs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "collect/cgroup_identity.h"
#include "common/strings.h"

namespace gpunoise::collect {
namespace {

// A small file below `dir_fd`, read whole (status and cgroup are a few
// KiB); nullopt if it cannot be (the process exited: ESRCH).
std::optional<std::string> ReadAt(int dir_fd, const char* name) {
  UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) return std::nullopt;
  std::string out;
  char buf[4096];
  while (out.size() < (1u << 20)) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// The second field (effective id) of a status line "Uid:\t0\t1000\t...".
std::optional<uint64_t> EffectiveId(std::string_view rest) {
  auto fields = Split(Trim(rest), '\t');
  if (fields.size() < 2) return std::nullopt;
  return ParseUint64(fields[1]);
}

std::string ModeText(mode_t m) { return fmt::format("{:04o}", static_cast<unsigned>(m & 07777)); }

}  // namespace

std::optional<ProcessOwner> ReadProcessOwner(int proc_pid_dir_fd) {
  auto status = ReadAt(proc_pid_dir_fd, "status");
  auto stat = ReadAt(proc_pid_dir_fd, "stat");
  if (!status || !stat) return std::nullopt;
  ProcessOwner o;
  bool have_uid = false, have_gid = false;
  for (std::string_view line : Split(*status, '\n')) {
    if (StartsWith(line, "Uid:")) {
      if (auto v = EffectiveId(line.substr(4))) o.uid = static_cast<uid_t>(*v), have_uid = true;
    } else if (StartsWith(line, "Gid:")) {
      if (auto v = EffectiveId(line.substr(4))) o.gid = static_cast<gid_t>(*v), have_gid = true;
    }
  }
  if (!have_uid || !have_gid) return std::nullopt;
  // Field 22, after the parenthesised comm (which may hold spaces).
  auto close = stat->rfind(')');
  if (close != std::string::npos && close + 2 < stat->size()) {
    auto fields = Split(std::string_view(*stat).substr(close + 2), ' ');
    if (fields.size() > 19) o.start_ticks = ParseUint64(fields[19]).value_or(0);
  }
  return o;
}

Result<PodFragmentDirs> PodFragmentDirs::Open(const std::string& root) {
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid())
    return MakeError("failed to open {}: {}", root,
                     errno == ELOOP ? "it is a symbolic link" : std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return MakeError("failed to stat {}: {}", root, std::strerror(errno));
  // Whoever else may create entries here could plant a pod's directory.
  if (st.st_uid != ::geteuid())
    return MakeError("refusing {}: owned by uid {}, not {} (it must be this agent's)", root, st.st_uid,
                     ::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return MakeError("refusing {}: mode {} lets others create entries in it (give it 0711 or 0755)", root,
                     ModeText(st.st_mode));
  PodFragmentDirs d(root, std::move(fd));
  d.euid_ = ::geteuid();
  return d;
}

Result<UniqueFd> PodFragmentDirs::Reopen(const std::string& name, const Entry& e) const {
  UniqueFd fd(::openat(root_fd_.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return MakeError("{}/{}: {}", root_, name, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return MakeError("{}/{}: {}", root_, name, std::strerror(errno));
  if (st.st_dev != e.dev || st.st_ino != e.ino) return MakeError("{}/{}: replaced since it was checked", root_, name);
  return fd;
}

void PodFragmentDirs::Ensure(const std::string& name, PodDirsPass* pass) {
  if (dirs_.count(name)) return;
  Entry e;
  bool created = ::mkdirat(root_fd_.get(), name.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) {
    pass->problems.push_back(fmt::format("failed to create {}/{}: {}", root_, name, std::strerror(errno)));
    return;  // tried again next pass
  }
  UniqueFd fd(::openat(root_fd_.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  std::string why;
  if (!fd.valid()) {
    int err = errno;
    struct stat lst {};
    // O_DIRECTORY meets a symlink first and says ENOTDIR: tell them apart.
    if (::fstatat(root_fd_.get(), name.c_str(), &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode))
      why = "it is a symbolic link";
    else
      why = err == ENOTDIR ? "not a directory" : std::strerror(err);
  } else if (::fstat(fd.get(), &st) != 0) {
    why = std::strerror(errno);
  } else if (created && ::fchmod(fd.get(), 0700) != 0) {  // mkdir's mode went through the umask
    why = std::string("failed to set its mode: ") + std::strerror(errno);
  } else if (!created && (st.st_mode & (S_IWGRP | S_IWOTH))) {
    why = "mode " + ModeText(st.st_mode) + " lets others write into it";
  }
  if (!why.empty()) {
    e.refused = true;
    pass->problems.push_back(fmt::format("refusing {}/{}: {}", root_, name, why));
    dirs_[name] = e;
    return;
  }
  e.dev = st.st_dev;
  e.ino = st.st_ino;
  e.owner = st.st_uid;
  // Made by root and still root's: waits for its pod's first process. One
  // owned by another uid (an earlier run handed it over) is checked against
  // that process when it appears.
  if (created) ++pass->created;
  dirs_[name] = e;
}

void PodFragmentDirs::HandOver(const std::string& name, Entry& e, const ProcessOwner& owner, PodDirsPass* pass) {
  if (e.owner != euid_) {
    // Not ours to give: it must already be the pod's.
    if (e.owner == owner.uid) {
      e.handed = true;
    } else {
      e.refused = true;
      pass->problems.push_back(fmt::format("refusing {}/{}: owned by uid {}, but the pod runs as uid {}", root_,
                                           name, e.owner, owner.uid));
    }
    return;
  }
  if (owner.uid == euid_) {  // a pod running as root writes into root's directory
    e.handed = true;
    return;
  }
  auto fd = Reopen(name, e);
  if (!fd.ok()) {
    e.refused = true;
    pass->problems.push_back("refusing " + fd.error().message);
    return;
  }
  // 0700 also for one kubelet made (a missing subPath gets the volume
  // root's mode, 0711 here): the pod's alone.
  if (::fchmod(fd->get(), 0700) != 0 || ::fchown(fd->get(), owner.uid, owner.gid) != 0) {
    pass->problems.push_back(fmt::format("failed to hand {}/{} to uid {}: {}", root_, name, owner.uid,
                                         std::strerror(errno)));
    return;  // tried again next pass
  }
  e.owner = owner.uid;
  e.handed = true;
  ++pass->handed;
}

PodDirsPass PodFragmentDirs::Update(const KubeletPods& pods, const std::string& proc_root) {
  PodDirsPass pass;
  std::set<std::string> live;
  for (const auto& [uid, names] : pods.pods()) {
    std::string name = names.pod_namespace + "_" + names.name + "_" + uid;
    live.insert(name);
    uid_[uid] = name;
    Ensure(name, &pass);
  }
  // Pods gone from the log tree: their directory goes if it is empty (the
  // fragments in one that is not still wait for a recorder).
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    if (live.count(it->first)) {
      ++it;
      continue;
    }
    if (!it->second.refused && ::unlinkat(root_fd_.get(), it->first.c_str(), AT_REMOVEDIR) == 0) ++pass.removed;
    it = dirs_.erase(it);
  }
  for (auto it = uid_.begin(); it != uid_.end();)
    it = dirs_.count(it->second) ? std::next(it) : uid_.erase(it);

  // Which pods wait for their first process.
  std::map<std::string, std::optional<ProcessOwner>> waiting;  // by pod uid
  for (const auto& [uid, name] : uid_) {
    const Entry& e = dirs_[name];
    if (!e.refused && !e.handed) waiting[uid];
  }
  if (waiting.empty()) return pass;
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir(proc_root.c_str()), ::closedir);
  if (!proc) {
    pass.problems.push_back(fmt::format("failed to read {}: {}", proc_root, std::strerror(errno)));
    return pass;
  }
  while (const dirent* ent = ::readdir(proc.get())) {
    if (!ParseInt64(ent->d_name)) continue;
    // Every read of this process goes through this fd: if the pid is
    // reused meanwhile, the reads fail instead of mixing two processes.
    UniqueFd pfd(::openat(dirfd(proc.get()), ent->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!pfd.valid()) continue;
    auto cgroup = ReadAt(pfd.get(), "cgroup");
    if (!cgroup) continue;
    std::vector<CgroupLine> lines = ParseProcCgroup(*cgroup);
    model::ContainerIdentity c = IdentifyContainer(lines);
    auto w = waiting.find(c.pod_uid);
    if (w == waiting.end()) continue;
    // Only a container the kubelet logs (an app or init container): the
    // sandbox's pause process runs as whatever its image says (65535).
    if (c.container_id.empty() || !pods.Container(c.container_id)) continue;
    auto owner = ReadProcessOwner(pfd.get());
    if (!owner) continue;
    if (!w->second || owner->start_ticks < w->second->start_ticks) w->second = owner;
  }
  for (const auto& [uid, owner] : waiting)
    if (owner) HandOver(uid_[uid], dirs_[uid_[uid]], *owner, &pass);
  return pass;
}

std::vector<std::string> PodFragmentDirs::Directories() const {
  std::vector<std::string> out;
  for (const auto& [name, e] : dirs_)
    if (!e.refused) out.push_back(root_ + "/" + name);
  return out;
}

std::optional<uid_t> PodFragmentDirs::HandedTo(const std::string& name) const {
  auto it = dirs_.find(name);
  if (it == dirs_.end() || !it->second.handed) return std::nullopt;
  return it->second.owner;
}

}  // namespace gpunoise::collect
