// Link notifications from the kernel (rtnetlink group RTMGRP_LINK): each
// carrier change of a device in this network namespace arrives as an
// RTM_NEWLINK message the moment it happens, and a removed device as
// RTM_DELLINK. The recorder polls the socket on every pass of its drain loop
// (non-blocking), so a link event is placed within one pass of when the
// kernel announced it, not at the next counter sample.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "collect/link_stats.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "model/nic_health.h"

namespace gpunoise::collect {

class LinkMonitor {
 public:
  static Result<LinkMonitor> Open();

  // The state the notifications are compared with (one link dump).
  void Seed(const std::vector<LinkStats>& links);
  // Reads every pending notification; returns the carrier changes and
  // removals among them, stamped `ts`. Lost notifications (the socket
  // overran: ENOBUFS) are counted in overruns().
  std::vector<model::LinkEvent> Poll(uint64_t ts);
  uint64_t overruns() const { return overruns_; }

  // Turns notifications into events against the known state (public for
  // tests).
  std::vector<model::LinkEvent> Apply(uint64_t ts, const std::vector<LinkStats>& notices);

 private:
  explicit LinkMonitor(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
  struct Known {
    std::string name;
    bool carrier = false;
  };
  std::map<int32_t, Known> known_;
  uint64_t overruns_ = 0;
};

}  // namespace gpunoise::collect
