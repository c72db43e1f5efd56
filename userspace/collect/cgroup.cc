#include "collect/cgroup.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {

Result<CgroupRef> ResolveCgroup(const std::string& path) {
  GN_ASSIGN_OR_RETURN(std::string mount, CgroupV2Mount());
  std::string full = path;
  if (full.empty()) return MakeError("empty cgroup path");
  if (full[0] != '/') full = mount + "/" + full;
  char real[PATH_MAX];
  if (!::realpath(full.c_str(), real))
    return MakeError("cgroup {} not found: {}", path, std::strerror(errno));
  std::string resolved = real;
  if (!StartsWith(resolved, mount))
    return MakeError("{} is not inside the cgroup v2 hierarchy at {}", path, mount);
  struct stat st;
  if (::stat(resolved.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return MakeError("cgroup {} is not a directory", resolved);
  CgroupRef ref;
  ref.path = resolved;
  ref.id = st.st_ino;
  std::string_view rel = std::string_view(resolved).substr(mount.size());
  for (std::string_view part : Split(rel, '/'))
    if (!part.empty()) ++ref.level;
  return ref;
}

}  // namespace gpunoise::collect
