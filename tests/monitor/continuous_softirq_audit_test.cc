#include "monitor/continuous_softirq_audit.h"

#include <gtest/gtest.h>

#include <deque>

namespace gpunoise::monitor {
namespace {

constexpr size_t kNetRx = static_cast<size_t>(model::SoftirqVec::kNetRx);
constexpr size_t kSched = static_cast<size_t>(model::SoftirqVec::kSched);

// /proc/softirqs as a script: each read takes the next reading, and an
// empty optional is a failed read.
struct ScriptedKernel {
  std::deque<std::optional<collect::KernelSoftirqCounts>> readings;
  int reads = 0;
  ContinuousSoftirqAudit::KernelReader Reader() {
    return [this]() -> Result<collect::KernelSoftirqCounts> {
      ++reads;
      if (readings.empty()) return MakeError("the script ran out");
      std::optional<collect::KernelSoftirqCounts> next = readings.front();
      readings.pop_front();
      if (!next) return MakeError("failed to open /proc/softirqs: Permission denied");
      return *next;
    };
  }
};

collect::KernelSoftirqCounts Kernel(std::map<uint32_t, std::pair<size_t, uint64_t>> per_cpu) {
  collect::KernelSoftirqCounts out;
  for (const auto& [cpu, count] : per_cpu) out[cpu][count.first] = count.second;
  return out;
}

std::vector<model::SoftirqCpuCounters> Runs(std::map<uint32_t, std::pair<size_t, uint64_t>> per_cpu) {
  std::vector<model::SoftirqCpuCounters> out;
  for (const auto& [cpu, count] : per_cpu) {
    model::SoftirqCpuCounters c;
    c.cpu = cpu;
    c.count[count.first] = count.second;
    out.push_back(c);
  }
  return out;
}

void Reading(ContinuousSoftirqAudit& audit, const std::vector<model::SoftirqCpuCounters>& runs) {
  audit.BeforeRuns();
  audit.AfterRuns(runs);
}

// The first reading reads the kernel only after the program (so a softirq
// in between is not counted as unreported later); every later reading reads
// it before.
TEST(ContinuousSoftirqAudit, TheBaselineReadsTheKernelAfterTheProgramAndLaterReadingsBefore) {
  ScriptedKernel kernel;
  kernel.readings = {Kernel({{0, {kNetRx, 10}}}), Kernel({{0, {kNetRx, 20}}})};
  ContinuousSoftirqAudit audit(kernel.Reader());
  audit.BeforeRuns();
  EXPECT_EQ(kernel.reads, 0);
  EXPECT_FALSE(audit.audited());
  audit.AfterRuns(Runs({{0, {kNetRx, 4}}}));
  EXPECT_EQ(kernel.reads, 1);
  EXPECT_TRUE(audit.audited());
  audit.BeforeRuns();
  EXPECT_EQ(kernel.reads, 2);
  audit.AfterRuns(Runs({{0, {kNetRx, 14}}}));
  EXPECT_EQ(kernel.reads, 2);
}

TEST(ContinuousSoftirqAudit, ASoftirqTheKernelNeverReportedCountsOnceTwoReadingsFoundIt) {
  ScriptedKernel kernel;
  kernel.readings = {Kernel({{0, {kSched, 100}}}), Kernel({{0, {kSched, 160}}}), Kernel({{0, {kSched, 200}}})};
  ContinuousSoftirqAudit audit(kernel.Reader());
  Reading(audit, Runs({{0, {kSched, 1000}}}));
  Reading(audit, Runs({{0, {kSched, 1058}}}));  // 60 counted, 58 seen: 2
  EXPECT_EQ(audit.unreported()[kSched], 0u) << "one reading confirms nothing";
  Reading(audit, Runs({{0, {kSched, 1097}}}));  // 100 counted, 97 seen: 3
  EXPECT_EQ(audit.unreported()[kSched], 2u);
  EXPECT_EQ(audit.unreported()[kNetRx], 0u);
}

// A softirq the kernel had counted but not yet reported when one reading
// was taken (a hard irq between the two) is seen by the next: never counted.
TEST(ContinuousSoftirqAudit, ASoftirqOneReadingCaughtBetweenItsCountAndItsTracepointNeverCounts) {
  ScriptedKernel kernel;
  kernel.readings = {Kernel({{0, {kNetRx, 0}}}), Kernel({{0, {kNetRx, 50}}}), Kernel({{0, {kNetRx, 90}}}),
                     Kernel({{0, {kNetRx, 95}}})};
  ContinuousSoftirqAudit audit(kernel.Reader());
  Reading(audit, Runs({{0, {kNetRx, 0}}}));
  Reading(audit, Runs({{0, {kNetRx, 49}}}));  // 1 in flight
  Reading(audit, Runs({{0, {kNetRx, 90}}}));
  Reading(audit, Runs({{0, {kNetRx, 94}}}));  // 1 in flight again
  EXPECT_EQ(audit.unreported()[kNetRx], 0u);
}

// A Prometheus counter must not fall: a reading that finds less (softirqs
// the program ran between the two reads) leaves the figure where it was.
TEST(ContinuousSoftirqAudit, TheFigureNeverFalls) {
  ScriptedKernel kernel;
  kernel.readings = {Kernel({{0, {kSched, 0}}}), Kernel({{0, {kSched, 10}}}), Kernel({{0, {kSched, 20}}}),
                     Kernel({{0, {kSched, 30}}}), Kernel({{0, {kSched, 40}}})};
  ContinuousSoftirqAudit audit(kernel.Reader());
  Reading(audit, Runs({{0, {kSched, 0}}}));
  Reading(audit, Runs({{0, {kSched, 7}}}));   // 3
  Reading(audit, Runs({{0, {kSched, 17}}}));  // 3: confirmed
  EXPECT_EQ(audit.unreported()[kSched], 3u);
  Reading(audit, Runs({{0, {kSched, 29}}}));  // 1
  Reading(audit, Runs({{0, {kSched, 39}}}));  // 1
  EXPECT_EQ(audit.unreported()[kSched], 3u);
}

// Per vector over all CPUs; a CPU whose program never ran (the collector
// leaves it out) counts as one that saw nothing.
TEST(ContinuousSoftirqAudit, SumsOverCpusAndCountsACpuTheProgramNeverSaw) {
  ScriptedKernel kernel;
  kernel.readings = {Kernel({{0, {kNetRx, 0}}, {1, {kNetRx, 0}}, {2, {kNetRx, 7}}}),
                     Kernel({{0, {kNetRx, 100}}, {1, {kNetRx, 100}}, {2, {kNetRx, 10}}}),
                     Kernel({{0, {kNetRx, 100}}, {1, {kNetRx, 100}}, {2, {kNetRx, 10}}})};
  ContinuousSoftirqAudit audit(kernel.Reader());
  Reading(audit, Runs({}));
  Reading(audit, Runs({{0, {kNetRx, 99}}, {1, {kNetRx, 96}}}));
  Reading(audit, Runs({{0, {kNetRx, 99}}, {1, {kNetRx, 96}}}));
  EXPECT_EQ(audit.unreported()[kNetRx], 1u + 4u + 3u);
}

// /proc/softirqs unreadable: no baseline and no figure until it can be
// read; a later failure skips that reading only.
TEST(ContinuousSoftirqAudit, AFailedReadSkipsThatReadingOnly) {
  ScriptedKernel kernel;
  kernel.readings = {std::nullopt, Kernel({{0, {kSched, 0}}}), Kernel({{0, {kSched, 5}}}), std::nullopt,
                     Kernel({{0, {kSched, 9}}})};
  ContinuousSoftirqAudit audit(kernel.Reader());
  Reading(audit, Runs({{0, {kSched, 0}}}));
  EXPECT_FALSE(audit.audited());
  Reading(audit, Runs({{0, {kSched, 100}}}));  // the baseline
  EXPECT_TRUE(audit.audited());
  Reading(audit, Runs({{0, {kSched, 104}}}));  // 1
  Reading(audit, Runs({{0, {kSched, 106}}}));  // skipped
  Reading(audit, Runs({{0, {kSched, 108}}}));  // 1: confirmed by the last reading that was taken
  EXPECT_EQ(audit.unreported()[kSched], 1u);
}

}  // namespace
}  // namespace gpunoise::monitor
