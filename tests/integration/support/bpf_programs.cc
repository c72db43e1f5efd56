#include "integration/support/bpf_programs.h"

#include <bpf/bpf.h>
#include <unistd.h>

namespace gpunoise::testing {

std::set<std::string> LoadedBpfProgramNames() {
  std::set<std::string> names;
  __u32 id = 0;
  while (bpf_prog_get_next_id(id, &id) == 0) {
    int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0) continue;  // unloaded since the id was listed
    bpf_prog_info info{};
    __u32 len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) names.insert(info.name);
    ::close(fd);
  }
  return names;
}

}  // namespace gpunoise::testing
