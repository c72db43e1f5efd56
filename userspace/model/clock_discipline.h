// How well a machine's clock was kept at one instant: what a reader of
// several machines' traces needs to say how far their REALTIME clocks, and
// so their alignment, can be trusted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpunoise::model {

struct ClockDiscipline {
  bool read = false;    // adjtimex(2) answered
  bool synced = false;  // the kernel's STA_UNSYNC was clear
  int64_t maxerror_us = 0;  // the kernel's bound on the clock's error
  int64_t esterror_us = 0;  // its estimate
  int64_t offset_ns = 0;    // the offset the discipline is still correcting
  // Clock daemons found running: chronyd, ntpd, ptp4l, phc2sys.
  std::vector<std::string> daemons;
  // PTP hardware clocks: "ptp0 (mlx5_ptp)".
  std::vector<std::string> ptp_clocks;
};

}  // namespace gpunoise::model
