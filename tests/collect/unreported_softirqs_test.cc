#include "collect/unreported_softirqs.h"

#include <gtest/gtest.h>

namespace gpunoise::collect {
namespace {

constexpr size_t kNetRx = static_cast<size_t>(model::SoftirqVec::kNetRx);
constexpr size_t kRcu = static_cast<size_t>(model::SoftirqVec::kRcu);

model::SoftirqCounts With(size_t vec, uint64_t n) {
  model::SoftirqCounts c{};
  c[vec] = n;
  return c;
}

TEST(UnreportedSoftirqs, CountsWhatTheKernelRanBeyondTheEntryProgramsRuns) {
  std::vector<model::SoftirqCounts> runs_begin = {With(kNetRx, 10), With(kNetRx, 100)};
  KernelSoftirqCounts kernel_begin = {{0, With(kNetRx, 50)}, {1, With(kNetRx, 500)}};
  KernelSoftirqCounts kernel_end = {{0, With(kNetRx, 1050)}, {1, With(kNetRx, 200500)}};
  std::vector<model::SoftirqCounts> runs_end = {With(kNetRx, 1010), With(kNetRx, 200095)};
  auto unreported = UnreportedSoftirqs(runs_begin, kernel_begin, kernel_end, runs_end);
  ASSERT_EQ(unreported.size(), 2u);
  EXPECT_EQ(unreported[0][kNetRx], 0u);
  EXPECT_EQ(unreported[1][kNetRx], 5u);
  EXPECT_EQ(unreported[1][kRcu], 0u);
}

// The program ran for softirqs the kernel had counted before its first
// read (the reads are apart): that is no loss, and no negative count.
TEST(UnreportedSoftirqs, AProgramThatRanMoreOftenMeansNothingUnreported) {
  auto unreported = UnreportedSoftirqs({With(kRcu, 0)}, {{0, With(kRcu, 3)}}, {{0, With(kRcu, 10)}},
                                       {With(kRcu, 10)});
  EXPECT_EQ(unreported[0][kRcu], 0u);
}

// The kernel's counters are 32-bit: one that wrapped during the recording
// still gives the right difference.
TEST(UnreportedSoftirqs, AKernelCounterThatWrappedStillCounts) {
  auto unreported = UnreportedSoftirqs({With(kNetRx, 1'000'000)}, {{0, With(kNetRx, 4'294'967'000)}},
                                       {{0, With(kNetRx, 2'000)}}, {With(kNetRx, 1'000'000 + 2'290)});
  EXPECT_EQ(unreported[0][kNetRx], 6u);
}

// A CPU that came online or went offline during the recording has no pair
// of kernel counts: it is not audited rather than guessed.
TEST(UnreportedSoftirqs, LeavesOutCpusWithoutBothKernelCountsOrProgramRuns) {
  auto unreported = UnreportedSoftirqs({With(kNetRx, 0), With(kNetRx, 0)}, {{0, With(kNetRx, 0)}},
                                       {{0, With(kNetRx, 4)}, {1, With(kNetRx, 9)}, {7, With(kNetRx, 9)}},
                                       {With(kNetRx, 4), With(kNetRx, 9)});
  EXPECT_EQ(unreported.size(), 1u);
  EXPECT_TRUE(unreported.contains(0));
}

}  // namespace
}  // namespace gpunoise::collect
