// The focus set in the kernel (bpf/focus.h): one BPF hash of ids (the tgids
// of focus processes and the tids of their threads) that the runqlat,
// irqtime and sampler objects share. User space owns it, so it outlives
// any one object and a config reload can rewrite it in place.
#pragma once

#include <cstdint>
#include <set>

#include "common/result.h"
#include "common/unique_fd.h"

namespace gpunoise::collect {

class FocusMap {
 public:
  static Result<FocusMap> Create();

  int fd() const { return fd_.get(); }
  // Makes the map hold exactly `ids` (adds the new ones, deletes the rest).
  // Ids past the map's capacity are left out and counted in the result.
  Result<size_t> Assign(const std::set<uint32_t>& ids);
  const std::set<uint32_t>& ids() const { return ids_; }

 private:
  explicit FocusMap(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
  std::set<uint32_t> ids_;
};

}  // namespace gpunoise::collect
