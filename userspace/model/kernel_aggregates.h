// The counters the kernel keeps for `gpunoise monitor` (bpf/irqtime,
// runqlat, sampler and the network collectors' aggregates), read as one
// cumulative snapshot per interval, and the difference of two snapshots.
// Pure data and functions: the OpenMetrics exporter formats snapshots, the
// interval detectors (userspace/analyze) read deltas, tests build both by
// hand.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "model/events.h"
#include "model/log2_histogram.h"
#include "model/net_counters.h"

namespace gpunoise::model {

// Who a sample or an interruption hit (bpf/focus.h gn_task_class).
enum class TaskClass : uint32_t { kIdle = 0, kFocus = 1, kKernel = 2, kOther = 3 };
inline constexpr uint32_t kNumTaskClasses = 4;
std::string_view TaskClassName(TaskClass c);  // "idle", "focus", "kernel", "other"

// What a sampled CPU was doing (bpf/sampler.h gn_sample_context).
enum class SampleContext : uint32_t { kTask = 0, kSoftirq = 1, kHardirq = 2, kIdle = 3 };
std::string_view SampleContextName(SampleContext c);  // "task", "softirq", "hardirq", "idle"

struct SoftirqCpuCounters {
  uint32_t cpu = 0;
  uint64_t count[kNumSoftirqVecs] = {};
  uint64_t ns[kNumSoftirqVecs] = {};
};

struct HardirqCounter {
  uint32_t cpu = 0;
  int32_t irq = 0;
  uint64_t count = 0;
  uint64_t ns = 0;
};

struct VectorCpuCounters {
  uint32_t cpu = 0;
  uint64_t count[kNumVectorKinds] = {};
  uint64_t ns[kNumVectorKinds] = {};
};

// Focus threads on one CPU: how often they left it (and were pushed off),
// how long they ran, waited and were interrupted there.
struct FocusCpuCounters {
  uint32_t cpu = 0;
  uint64_t switches = 0;
  uint64_t preempted = 0;
  uint64_t preempted_by[kNumTaskClasses] = {};  // by the class of the task that took the CPU
  uint64_t oncpu_ns = 0;
  uint64_t wait_woken_ns = 0;      // run-queue wait after a wakeup
  uint64_t wait_preempted_ns = 0;  // run-queue wait after a preemption
  uint64_t waits = 0;
  uint64_t hardirq_count = 0, hardirq_ns = 0;  // interrupts that ran over a focus thread
  uint64_t softirq_count = 0, softirq_ns = 0;
  // The waits by what had the CPU meanwhile, besides the tasks
  // (RunqueueCulprit) and idle: interrupts, and time before the oldest run
  // the kernel remembers (bpf/runqlat.h GN_RQ_HISTORY).
  uint64_t wait_hardirq_ns = 0, wait_softirq_ns = 0, wait_unknown_ns = 0;
};

// A task that had a CPU while focus threads waited for it (its run there,
// less the interrupts inside it), as the report attributes a wait.
struct RunqueueCulprit {
  uint32_t cpu = 0;
  int32_t tid = 0;
  int32_t tgid = 0;  // 0 where the kernel did not say
  TaskComm comm;
  uint64_t wait_ns = 0;
  uint64_t waits = 0;  // focus threads' waits it was part of
};

struct RunqueueCpuHistograms {
  uint32_t cpu = 0;
  Log2Histogram all;
  Log2Histogram focus;
};

struct SampleCounter {
  uint32_t cpu = 0;
  SampleContext context = SampleContext::kTask;
  TaskClass task_class = TaskClass::kOther;
  int32_t id = -1;  // softirq vector or IRQ; -1 for tasks
  TaskComm comm;    // tasks only
  uint64_t count = 0;

  auto Key() const { return std::make_tuple(cpu, context, task_class, id, std::string(comm.view())); }
};

// /sys/kernel/{softlockup,hardlockup,rcu_stall,warn,oops}_count: the
// kernel's own trouble counters since boot (those this kernel has).
using KernelHealthCounters = std::map<std::string, uint64_t>;

struct AggregateSnapshot {
  uint64_t ts = 0;  // CLOCK_BOOTTIME when read
  std::vector<SoftirqCpuCounters> softirqs;
  std::vector<HardirqCounter> hardirqs;
  std::vector<VectorCpuCounters> vectors;
  std::vector<FocusCpuCounters> focus;
  std::vector<RunqueueCpuHistograms> runqueue;
  std::vector<SampleCounter> samples;
  std::vector<RunqueueCulprit> culprits;
  NetSnapshot net;
  KernelHealthCounters kernel;
  uint64_t dql_stalls = 0;  // napi:dql_stall_detected (TX byte queue limits saw a stall)
  // Per-CPU counts of updates the kernel side could not make (a full map),
  // summed over collectors: lost data, reported as such.
  uint64_t lost = 0;
};

// `later` minus `earlier`, entry by entry (an entry missing from `earlier`
// counts from zero; an entry that went down counts its full `later` value,
// as after a reset). Entries only in `earlier` are gone from the result.
AggregateSnapshot Delta(const AggregateSnapshot& earlier, const AggregateSnapshot& later);

// Sums over CPUs.
Log2Histogram TotalRunqueue(const AggregateSnapshot& s, bool focus_only);

}  // namespace gpunoise::model
