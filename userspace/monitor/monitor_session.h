// `gpunoise monitor`: always-on, aggregate-only collectors; every interval
// their counters are read, the detectors run on the deltas, findings become
// episodes (and flight-recorder dumps), and the metrics are published on
// /metrics. Runs until SIGTERM or SIGINT; SIGHUP reloads the config file.
#pragma once

#include <functional>
#include <string>

#include "common/result.h"
#include "monitor/monitor_options.h"

namespace gpunoise::monitor {

struct MonitorRun {
  OptionLayer command_line;  // as given (the config file is read from it)
  std::string command_text;  // for the dumps' metadata
  // A signalfd for SIGINT, SIGTERM and SIGHUP.
  int signal_fd = -1;
  // For tests: stop after this many intervals (0: until a signal).
  uint64_t max_intervals = 0;
};

// Returns once stopped. Errors before anything runs (privileges, BTF, a bad
// listen address, a bad config) come back as Error; the caller exits 1.
Status RunMonitor(const MonitorRun& run);

}  // namespace gpunoise::monitor
