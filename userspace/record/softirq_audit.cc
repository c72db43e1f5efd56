#include "record/softirq_audit.h"

#include "collect/unreported_softirqs.h"
#include "common/log.h"

namespace gpunoise::record {

std::optional<SoftirqAudit> SoftirqAudit::Begin(const collect::IrqCollector& irq) {
  SoftirqAudit audit;
  audit.runs_begin_ = irq.SoftirqEntryRuns();
  if (audit.runs_begin_.empty()) return std::nullopt;  // no softirq programs: nothing to audit
  Result<collect::KernelSoftirqCounts> kernel = collect::ReadProcSoftirqs();
  if (!kernel.ok()) {
    log::Warning("softirqs the kernel does not report to its tracepoint will not be counted: {}",
                 kernel.error().message);
    return std::nullopt;
  }
  audit.kernel_begin_ = std::move(kernel).value();
  return audit;
}

void SoftirqAudit::End(const collect::IrqCollector& irq) {
  Result<collect::KernelSoftirqCounts> kernel = collect::ReadProcSoftirqs();
  std::vector<model::SoftirqCounts> runs = irq.SoftirqEntryRuns();
  if (!kernel.ok() || runs.empty()) {
    log::Warning("softirqs the kernel did not report to its tracepoint were not counted: {}",
                 kernel.ok() ? "the entry program's counts could not be read" : kernel.error().message);
    return;
  }
  unreported_ = collect::UnreportedSoftirqs(runs_begin_, kernel_begin_, *kernel, runs);
}

void SoftirqAudit::ApplyTo(model::SessionInfo& session) const {
  if (!unreported_) return;
  session.softirqs_audited = true;
  for (model::CpuLoss& cpu : session.cpus) {
    auto it = unreported_->find(cpu.cpu);
    if (it != unreported_->end()) cpu.unreported_softirqs = it->second;
  }
}

}  // namespace gpunoise::record
