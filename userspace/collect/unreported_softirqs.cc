#include "collect/unreported_softirqs.h"

namespace gpunoise::collect {

std::map<uint32_t, model::SoftirqCounts> UnreportedSoftirqs(const std::vector<model::SoftirqCounts>& runs_begin,
                                                            const KernelSoftirqCounts& kernel_begin,
                                                            const KernelSoftirqCounts& kernel_end,
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

}  // namespace gpunoise::collect
