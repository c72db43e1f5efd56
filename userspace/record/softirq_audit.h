// Softirqs the kernel ran without calling its tracepoint.
//
// The kernel counts each softirq handler run (/proc/softirqs) on the line
// before it calls softirq_entry, and the irq collector's entry program
// counts its own runs per CPU and vector (struct gn_softirq_cpu). On this
// project's development VM the two part: under a NET_RX flood, 2 to 19 of
// about 150,000 softirqs a recording were counted by the kernel and seen by
// no program run, neither gpunoise's (tp_btf, no recursion miss) nor an
// independent bpftrace probe on the classic tracepoint, which missed the
// same ones; on an idle node about one SCHED and one RCU softirq a second
// on CPU 0, which bpftrace alone misses too (docs/record.md, "Softirqs the
// kernel never reported"). The recorder cannot trace what the kernel never
// reported, but it can count it: this compares the two counts across the
// recording, so such softirqs are reported, never silently missing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "collect/irq_collector.h"
#include "collect/proc_softirqs.h"
#include "model/events.h"
#include "model/session_info.h"

namespace gpunoise::record {

class SoftirqAudit {
 public:
  // Reads both counts when the gate opens; nullopt (with a warning) when
  // either cannot be read: the recording then says nothing was audited.
  static std::optional<SoftirqAudit> Begin(const collect::IrqCollector& irq);
  // When the gate closes, before the programs are detached.
  void End(const collect::IrqCollector& irq);
  // Into the session summary: which CPUs' counts were audited, and what
  // the kernel did not report on each.
  void ApplyTo(model::SessionInfo& session) const;

 private:
  std::vector<model::SoftirqCounts> runs_begin_;
  collect::KernelSoftirqCounts kernel_begin_;
  std::optional<std::map<uint32_t, model::SoftirqCounts>> unreported_;
};

}  // namespace gpunoise::record
