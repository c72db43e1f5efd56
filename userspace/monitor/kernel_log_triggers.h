// The kernel log's severe messages as the monitor's findings: a NETDEV
// WATCHDOG / driver TX timeout, a NIC reset, a soft or hard lockup, an RCU
// stall, a hung task or a machine check read from /dev/kmsg becomes an
// Observation of detector "kernel_log" (kind: the class name, device: the
// device it names), so it goes through the same FindingTracker episodes
// (one dump per episode, however often the message repeats) and the same
// flight-recorder rate limit as every other finding.
#pragma once

#include <span>
#include <vector>

#include "model/kernel_log.h"
#include "monitor/finding_tracker.h"

namespace gpunoise::monitor {

// Whether a message of this class triggers a flight-recorder dump.
bool TriggersFlightRecorder(model::KernelLogClass cls);

// One observation per (class, device) among `entries` that trigger; the
// evidence quotes the first message (and counts the rest).
std::vector<Observation> KernelLogObservations(std::span<const model::KernelLogEntry> entries);

}  // namespace gpunoise::monitor
