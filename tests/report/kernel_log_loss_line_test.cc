// The report's kernel log loss line (report/loss_lines.cc): what the
// two halves of the kernel log lost and what only one of them had.
#include <gtest/gtest.h>

#include "report/loss_lines.h"

namespace gpunoise::report_export {
namespace {

std::string KernelLogLine(const analyze::LossSummary& l) {
  for (const auto& line : LossLines(l))
    if (line.rfind("kernel log:", 0) == 0) return line;
  return "";
}

TEST(KernelLogLossLine, SaysLossAndUnmatchedRecordsOfBothHalves) {
  analyze::LossSummary l;
  l.kernel_log = {12, 9, 2, 2, 1, 5, true};
  EXPECT_EQ(KernelLogLine(l),
            "kernel log: 12 messages, 9 with the printk's CPU and task; lost: 2 overwritten in /dev/kmsg's ring before "
            "they were read (sequence gaps), 5 overwritten in the console collector's log; unmatched: 2 only in "
            "/dev/kmsg (estimated time, no caller), 1 only from printk:console (no level or DEVICE=)");
  // Kernel log records are not ring events: the total stays as it was.
  EXPECT_EQ(LossLines(l).front(), "lost events: 0 (source: )");
}

TEST(KernelLogLossLine, WithoutTheConsoleCollectorSaysSo) {
  analyze::LossSummary l;
  l.kernel_log.messages = 3;
  EXPECT_EQ(KernelLogLine(l),
            "kernel log: 3 messages (no printk:console collector: times from /dev/kmsg, no CPU or task); none lost");
}

TEST(LossLines, SlicesCutWhereTheyOverlappedAreSaid) {
  analyze::LossSummary l;
  l.slices_trimmed = 3;
  bool said = false;
  for (const auto& line : LossLines(l))
    said |= line == "3 CPU slices overlapped earlier ones (events out of order: a damaged trace) and were cut where "
                    "they overlapped";
  EXPECT_TRUE(said);
  l.slices_trimmed = 0;
  for (const auto& line : LossLines(l)) EXPECT_EQ(line.find("overlapped"), std::string::npos) << line;
}

TEST(LossLines, UntimedNetRxSoftirqsAreSaidAsCountedNotLost) {
  analyze::LossSummary l;
  l.netrx_sample_every = 16;
  l.netrx_untimed = 1500;
  l.netrx_untimed_placed = 1490;
  std::vector<std::string> lines = LossLines(l);
  EXPECT_EQ(lines.front(), "lost events: 0 (source: )") << "untimed softirqs are not lost events";
  bool said = false;
  for (const auto& line : lines)
    said |= line == "NET_RX storms sampled: 1500 softirqs ran untimed, counted exactly (not lost); the recorder timed "
                    "1 in 16 past 8 a tick on a CPU (record --netrx-sample); 1490 placed between the timed ones as "
                    "estimates, as long as those (10 did not fit and count without time)";
  EXPECT_TRUE(said);
  l.netrx_untimed = 0;
  for (const auto& line : LossLines(l)) EXPECT_EQ(line.find("untimed"), std::string::npos) << line;
}

TEST(KernelLogLossLine, NoKernelLogNoLine) {
  analyze::LossSummary l;
  EXPECT_EQ(KernelLogLine(l), "");
}

}  // namespace
}  // namespace gpunoise::report_export
