// Softirqs the kernel ran without calling its tracepoint, counted for as
// long as the monitor runs.
//
// The recorder audits once per recording (record/softirq_audit.h); the
// monitor has no end, so it audits at every interval: the kernel's count
// (/proc/softirqs) is read just before the irqtime collector's entry counts,
// and what the kernel counted beyond them since the monitor started is the
// figure (collect/unreported_softirqs.h). One reading can count a softirq
// the kernel had counted and not yet reported when the two reads were taken
// (a hard irq between its count and its tracepoint), so a softirq counts
// only once two successive readings found it: the published figure is a
// lower bound that never falls, as a Prometheus counter must not.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "collect/proc_softirqs.h"
#include "common/result.h"
#include "model/events.h"
#include "model/kernel_aggregates.h"

namespace gpunoise::monitor {

class ContinuousSoftirqAudit {
 public:
  using KernelReader = std::function<Result<collect::KernelSoftirqCounts>()>;
  explicit ContinuousSoftirqAudit(KernelReader read_kernel = collect::ReadProcSoftirqs);

  // One reading is two calls around the read of the entry program's
  // counts: BeforeRuns() reads the kernel's, AfterRuns() takes the
  // program's. The first reading takes the baseline in the other order
  // (the kernel's count after the program's), which is what makes every
  // later figure a lower bound. A failed read of /proc/softirqs is one
  // warning, and the reading is skipped.
  void BeforeRuns();
  void AfterRuns(std::span<const model::SoftirqCpuCounters> runs);

  // A baseline was taken: the figures below mean something.
  bool audited() const { return baseline_.has_value(); }
  // Softirqs the kernel did not report since the baseline, confirmed by
  // two successive readings, per vector, summed over CPUs.
  model::SoftirqCounts unreported() const;

 private:
  struct Baseline {
    std::vector<model::SoftirqCounts> runs;
    collect::KernelSoftirqCounts kernel;
  };
  std::optional<collect::KernelSoftirqCounts> ReadKernel();

  KernelReader read_kernel_;
  bool warned_ = false;
  std::optional<Baseline> baseline_;
  std::optional<collect::KernelSoftirqCounts> kernel_now_;  // read by BeforeRuns
  std::map<uint32_t, model::SoftirqCounts> last_;           // the last reading's figures, per CPU
  std::map<uint32_t, model::SoftirqCounts> confirmed_;      // never falling, per CPU
};

}  // namespace gpunoise::monitor
