// Makes a trace look as if another machine had recorded it: for the tests of
// merging traces of several machines on one machine.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace gpunoise::testing {

struct OtherMachine {
  std::string machine_name;
  std::string boot_id;
  int64_t boottime_shift_ns = 0;  // it booted this much earlier
  int64_t realtime_error_ns = 0;  // its REALTIME runs this much ahead
  // No clock snapshots at all: a trace whose clock cannot be related to
  // another machine's.
  bool drop_clock_snapshots = false;
};

// Reads `in` (compressed blocks included) and writes `out` uncompressed with
// every BOOTTIME-domain timestamp (packet timestamps, ftrace events,
// compact_sched, the BOOTTIME and MONOTONIC clocks of clock snapshots)
// moved by boottime_shift_ns, REALTIME snapshots by realtime_error_ns, and
// the machine name and boot_id replaced.
Status RewriteAsOtherMachine(const std::string& in, const std::string& out, const OtherMachine& m);

}  // namespace gpunoise::testing
