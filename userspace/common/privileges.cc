#include "common/privileges.h"

#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"

namespace gpunoise {

bool KernelKnowsCapability(int cap) { return ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; }

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

Status DropPrivilegesAfterAttach(const char* who, CapMask keep, const std::vector<std::string>& reasons) {
  auto now = DropCapabilitiesExcept(keep);
  if (!now.ok()) return now.error();
  log::Debug("{}: after attaching, keeping {} (no_new_privs set)", who, CapabilityNames(*now));
  for (const std::string& r : reasons) log::Debug("{}:   {}", who, r);
  return OkStatus();
}

}  // namespace gpunoise
