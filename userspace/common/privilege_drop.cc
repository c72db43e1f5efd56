#include "common/privilege_drop.h"

#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/private_file.h"

namespace gpunoise {
namespace {

// Whether this kernel knows a capability (CAP_BPF and CAP_PERFMON came in
// 5.8).
bool KernelKnows(int cap) { return ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; }

}  // namespace

Result<gid_t> LookUpGroup(std::string_view name) {
  std::string n(name);
  if (n.empty()) return MakeError("group: empty name");
  if (std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (n.size() > 9) return MakeError("group: '{}' is not a group id", n);
    return static_cast<gid_t>(std::stoul(n));
  }
  group gr {};
  group* found = nullptr;
  std::vector<char> buf(16384);
  if (::getgrnam_r(n.c_str(), &gr, buf.data(), buf.size(), &found) != 0 || !found)
    return MakeError("group: no group named '{}' on this node", n);
  return found->gr_gid;
}

Status JoinGroup(gid_t gid) {
  if (::getegid() == gid) return OkStatus();
  int n = ::getgroups(0, nullptr);
  std::vector<gid_t> groups(static_cast<size_t>(std::max(n, 0)));
  if (n > 0 && ::getgroups(n, groups.data()) < 0)
    return MakeError("failed to read this process's groups: {}", std::strerror(errno));
  if (std::find(groups.begin(), groups.end(), gid) != groups.end()) return OkStatus();
  groups.push_back(gid);
  if (::setgroups(groups.size(), groups.data()) != 0)
    return MakeError("failed to join group {}: {}", gid, std::strerror(errno));
  return OkStatus();
}

CapMask RecordKeeps(const RecordNeeds& needs, std::vector<std::string>* reasons) {
  CapMask keep = 0;
  // The trace is written through an fd opened before the drop, but at the
  // end it is renamed into place, which needs write access to the
  // directory: root owns it, or root may only with CAP_DAC_OVERRIDE (a
  // user's home or project directory under sudo).
  std::string dir = PrivateFileDirName(needs.output_path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && st.st_uid != ::geteuid() && !(st.st_mode & S_IWOTH)) {
    keep |= CapBit(kCapDacOverride);
    reasons->push_back("cap_dac_override: the trace is renamed into " + dir + " (owned by uid " +
                       std::to_string(st.st_uid) + ") when the recording ends");
  }
  // GPU fragments: each process writes its own into the directory `gpunoise
  // env` gave its user (0700, owned by that user); record reads them at the
  // end and removes them and the directory.
  if (!needs.gpu_dir.empty() && !(keep & CapBit(kCapDacOverride))) {
    keep |= CapBit(kCapDacOverride);
    reasons->push_back("cap_dac_override: GPU fragments are read from and removed in " + needs.gpu_dir +
                       " (0700, owned by the user whose processes wrote them)");
  }
  // --gpu-pod-dirs: each pod's directory is made root's and handed to the
  // pod's user when its first process appears, during the recording.
  if (needs.pod_dirs) {
    keep |= CapBit(kCapChown);
    reasons->push_back("cap_chown: the per-pod GPU fragment directories under " + needs.gpu_dir +
                       " are handed to each pod's user as its first process appears");
  }
  return keep;
}

CapMask MonitorKeeps(std::vector<std::string>* reasons) {
  if (!KernelKnows(kCapBpf) || !KernelKnows(kCapPerfmon)) {
    reasons->push_back("cap_sys_admin: this kernel has no CAP_BPF/CAP_PERFMON (before 5.8); a reload may load "
                       "programs and the sampler opens perf events for CPUs coming online");
    return CapBit(kCapSysAdmin);
  }
  reasons->push_back("cap_bpf: a reload may start the flight recorder or the sampler (programs and maps to load)");
  reasons->push_back("cap_perfmon: the sampler opens perf events for CPUs coming online; tracing programs "
                     "loaded on reload");
  return CapBit(kCapBpf) | CapBit(kCapPerfmon);
}

Status DropPrivilegesAfterAttach(const char* who, CapMask keep, const std::vector<std::string>& reasons) {
  auto now = DropCapabilitiesExcept(keep);
  if (!now.ok()) return now.error();
  log::Debug("{}: after attaching, keeping {} (no_new_privs set)", who, CapabilityNames(*now));
  for (const std::string& r : reasons) log::Debug("{}:   {}", who, r);
  return OkStatus();
}

}  // namespace gpunoise
