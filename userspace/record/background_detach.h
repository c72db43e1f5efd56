// Detaching a recording's programs can take seconds (each classic
// tracepoint waits for RCU grace periods; measured here: `record -d 1
// --attach tracepoint` takes 3.1 s of wall time). The recording gate is
// already closed then, so nothing more is recorded: a second Ctrl-C during
// that wait means "finish now", and the trace is completed at once while
// the kernel goes on detaching.
#pragma once

#include <memory>
#include <vector>

#include "collect/collector.h"

namespace gpunoise::record {

// Detaches every collector on a thread while watching `stop_fd` (a
// signalfd; -1: none). True when all detached. False when a stop signal
// came first (it is consumed): the thread goes on detaching, so the caller
// must not free the collectors (LeaveToDetacher) nor wait for it.
bool DetachUnlessStopped(const std::vector<std::unique_ptr<collect::Collector>>& collectors, int stop_fd);

// After DetachUnlessStopped returned false: gives up ownership of the
// collectors (the detaching thread still uses them; the process is ending).
void LeaveToDetacher(std::vector<std::unique_ptr<collect::Collector>>& collectors);

}  // namespace gpunoise::record
