#include "record/softirq_audit.h"

#include "common/log.h"

namespace gpunoise::record {

std::map<uint32_t, model::SoftirqCounts> UnreportedSoftirqs(const std::vector<model::SoftirqCounts>& runs_begin,
                                                            const collect::KernelSoftirqCounts& kernel_begin,
                                                            const collect::KernelSoftirqCounts& kernel_end,
                                                            const std::vector<model::SoftirqCounts>& runs_end) {
  std::map<uint32_t, model::SoftirqCounts> out;
  for (const auto& [cpu, end] : kernel_end) {
    auto begin = kernel_begin.find(cpu);
    if (begin == kernel_begin.end() || cpu >= runs_begin.size() || cpu >= runs_end.size()) continue;
    model::SoftirqCounts& unreported = out[cpu];
    for (uint32_t vec = 0; vec < model::kNumSoftirqVecs; ++vec) {
      const auto kernel = static_cast<uint32_t>(end[vec] - begin->second[vec]);
      const auto runs = static_cast<uint32_t>(runs_end[cpu][vec] - runs_begin[cpu][vec]);
      const auto more = static_cast<uint32_t>(kernel - runs);
      // A "negative" difference: the program ran more often (softirqs
      // between the reads at either end), nothing unreported.
      unreported[vec] = more < (1u << 31) ? more : 0;
    }
  }
  return out;
}

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
  unreported_ = UnreportedSoftirqs(runs_begin_, kernel_begin_, *kernel, runs);
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
