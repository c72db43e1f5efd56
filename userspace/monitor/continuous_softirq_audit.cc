#include "monitor/continuous_softirq_audit.h"

#include <algorithm>
#include <utility>

#include "collect/unreported_softirqs.h"
#include "common/log.h"

namespace gpunoise::monitor {
namespace {

// The program's counts indexed by CPU, for every CPU the kernel's counts
// name: the collector leaves out CPUs whose program never ran.
std::vector<model::SoftirqCounts> RunsByCpu(std::span<const model::SoftirqCpuCounters> rows,
                                            const collect::KernelSoftirqCounts& kernel) {
  size_t size = kernel.empty() ? 0 : kernel.rbegin()->first + 1;
  for (const model::SoftirqCpuCounters& r : rows) size = std::max<size_t>(size, r.cpu + 1);
  std::vector<model::SoftirqCounts> out(size, model::SoftirqCounts{});
  for (const model::SoftirqCpuCounters& r : rows) std::copy(std::begin(r.count), std::end(r.count), out[r.cpu].begin());
  return out;
}

}  // namespace

ContinuousSoftirqAudit::ContinuousSoftirqAudit(KernelReader read_kernel) : read_kernel_(std::move(read_kernel)) {}

std::optional<collect::KernelSoftirqCounts> ContinuousSoftirqAudit::ReadKernel() {
  Result<collect::KernelSoftirqCounts> kernel = read_kernel_();
  if (kernel.ok()) return std::move(kernel).value();
  if (!std::exchange(warned_, true))
    log::Warning("monitor: softirqs the kernel does not report to its tracepoint are not counted for now: {}",
                 kernel.error().message);
  return std::nullopt;
}

void ContinuousSoftirqAudit::BeforeRuns() { kernel_now_ = baseline_ ? ReadKernel() : std::nullopt; }

void ContinuousSoftirqAudit::AfterRuns(std::span<const model::SoftirqCpuCounters> runs) {
  if (!baseline_) {
    if (std::optional<collect::KernelSoftirqCounts> kernel = ReadKernel())
      baseline_ = Baseline{RunsByCpu(runs, *kernel), std::move(*kernel)};
    return;
  }
  if (!kernel_now_) return;
  std::map<uint32_t, model::SoftirqCounts> now = collect::UnreportedSoftirqs(
      baseline_->runs, baseline_->kernel, *kernel_now_, RunsByCpu(runs, *kernel_now_));
  for (const auto& [cpu, figures] : now) {
    auto last = last_.find(cpu);
    if (last == last_.end()) continue;
    model::SoftirqCounts& confirmed = confirmed_[cpu];
    for (size_t vec = 0; vec < figures.size(); ++vec)
      confirmed[vec] = std::max(confirmed[vec], std::min(figures[vec], last->second[vec]));
  }
  last_ = std::move(now);
  kernel_now_.reset();
}

model::SoftirqCounts ContinuousSoftirqAudit::unreported() const {
  model::SoftirqCounts sum{};
  for (const auto& [cpu, figures] : confirmed_)
    for (size_t vec = 0; vec < figures.size(); ++vec) sum[vec] += figures[vec];
  return sum;
}

}  // namespace gpunoise::monitor
