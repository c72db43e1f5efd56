#include "collect/focus_map.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>

extern "C" {
#include "bpf/focus.h"
}

namespace gpunoise::collect {

Result<FocusMap> FocusMap::Create() {
  int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "gn_focus", sizeof(uint32_t), sizeof(uint8_t),
                          GN_FOCUS_MAX, nullptr);
  if (fd < 0) return MakeError("failed to create the focus map: {}", std::strerror(errno));
  return FocusMap(UniqueFd(fd));
}

Result<size_t> FocusMap::Assign(const std::set<uint32_t>& ids) {
  for (uint32_t id : ids_) {
    if (ids.count(id)) continue;
    if (bpf_map_delete_elem(fd_.get(), &id) != 0 && errno != ENOENT)
      return MakeError("failed to update the focus map: {}", std::strerror(errno));
  }
  std::set<uint32_t> now;
  size_t left_out = 0;
  uint8_t one = 1;
  for (uint32_t id : ids) {
    if (ids_.count(id)) {
      now.insert(id);
      continue;
    }
    if (now.size() >= GN_FOCUS_MAX || bpf_map_update_elem(fd_.get(), &id, &one, BPF_ANY) != 0) {
      ++left_out;
      continue;
    }
    now.insert(id);
  }
  ids_ = std::move(now);
  return left_out;
}

}  // namespace gpunoise::collect
