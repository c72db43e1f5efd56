// The detectors for continuous mode (`gpunoise monitor`): the questions the
// trace detectors ask (softirq storm, interference, NIC trouble), asked of
// one interval's deltas of the kernel's aggregates (model/kernel_aggregates.h)
// instead of a timeline of events. The interval takes the place of
// softirq.window and nic.window; every other threshold keeps its name,
// default and meaning (docs/report.md), so one `--threshold NAME=VALUE`
// means the same in both modes.
//
// What an interval cannot tell: which task was on the CPU at each moment
// (the sampler's counts stand in for it), and when inside the interval
// something happened (a finding spans the whole interval).
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/finding.h"
#include "analyze/thresholds.h"
#include "model/irq_info.h"
#include "model/kernel_aggregates.h"
#include "model/net_counters.h"

namespace gpunoise::analyze {

struct IntervalContext {
  const model::AggregateSnapshot* delta = nullptr;  // this interval's counts
  uint64_t start = 0, end = 0;                      // CLOCK_BOOTTIME
  const model::IrqTable* irqs = nullptr;            // names, NIC devices and queues
  const model::NetNames* names = nullptr;           // device and drop-reason names
  const Thresholds* thresholds = nullptr;

  uint64_t length_ns() const { return end > start ? end - start : 0; }
};

// On one CPU, one softirq vector took more than softirq.share of the
// interval, or ksoftirqd ran more than softirq.ksoftirqd_share of the
// sampler's hits there. Names the device, queue and IRQ that drove a
// network softirq (NAPI work and NIC interrupts on that CPU).
std::vector<Finding> DetectIntervalSoftirqStorms(const IntervalContext& ctx);

// Focus threads lost at least interference.min_delay and
// interference.min_share of their time (running plus waiting) to run-queue
// waits and interrupts. The culprit is the biggest share: tasks that
// preempted them (by class, and the sampler's busiest other task on their
// CPUs), CPU contention after wakeups, hard irqs or softirqs.
std::vector<Finding> DetectIntervalInterference(const IntervalContext& ctx);

// TX watchdog timeouts, DQL stalls, NAPI polls that used their whole budget
// above nic.full_budget_rate (per device and CPU), drops of one reason above
// nic.drop_rate, NIC interrupts on CPUs where focus threads ran (at least
// nic.irq_overlap_min, costing nic.irq_overlap_share), and rising kernel
// lockup / RCU-stall / warn / oops counters.
std::vector<Finding> DetectIntervalNicTrouble(const IntervalContext& ctx);

// All three, storms first.
std::vector<Finding> DetectIntervalFindings(const IntervalContext& ctx);

}  // namespace gpunoise::analyze
