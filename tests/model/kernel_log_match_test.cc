#include "model/kernel_log_match.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

constexpr uint64_t kMs = 1'000'000;

KernelLogEntry Kmsg(uint64_t seq, uint64_t ts, std::string text, std::string device = "") {
  KernelLogEntry e;
  e.seq = seq;
  e.ts = ts;
  e.level = 4;
  e.text = std::move(text);
  e.device = std::move(device);
  KernelLogMatch m = ClassifyKernelLog(e.text);
  e.cls = m.cls;
  e.about = !e.device.empty() ? e.device : m.device;
  return e;
}

ConsoleRecord Console(uint64_t ts, uint32_t cpu, int32_t tid, std::string text, uint32_t len = 0) {
  ConsoleRecord c;
  c.ts = ts;
  c.cpu = cpu;
  c.tid = tid;
  c.pid = tid;
  c.comm = "task" + std::to_string(tid);
  c.len = len ? len : static_cast<uint32_t>(text.size());
  c.text = std::move(text);
  return c;
}

TEST(MergeKernelLog, AMatchedMessageGetsTheConsoleTimeAndCallerAndKeepsKmsgFields) {
  KernelLogMatchStats st;
  auto out = MergeKernelLog({Kmsg(7, 100 * kMs, "NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out 5120 ms",
                                  "+pci:0000:3b:00.0")},
                            {Console(100 * kMs - 4000, 3, 812, "NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out 5120 ms")},
                            kKernelLogMatchWindowNs, &st);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].source, KernelLogSource::kBoth);
  EXPECT_EQ(out[0].ts, 100 * kMs - 4000);
  EXPECT_EQ(out[0].cpu, 3);
  EXPECT_EQ(out[0].tid, 812);
  EXPECT_EQ(out[0].comm, "task812");
  EXPECT_EQ(out[0].seq, 7u);
  EXPECT_EQ(out[0].level, 4);
  EXPECT_EQ(out[0].device, "+pci:0000:3b:00.0");
  EXPECT_EQ(out[0].cls, KernelLogClass::kTxTimeout);
  EXPECT_EQ(st.matched, 1u);
  EXPECT_EQ(st.kmsg_unmatched, 0u);
  EXPECT_EQ(st.console_unmatched, 0u);
}

TEST(MergeKernelLog, RepeatedTextsMatchInOrder) {
  // Three identical lines from three CPUs: each kmsg record takes the
  // earliest console record left, so times and callers keep their order.
  std::vector<KernelLogEntry> kmsg = {Kmsg(1, 10 * kMs, "same"), Kmsg(2, 20 * kMs, "same"), Kmsg(3, 30 * kMs, "same")};
  std::vector<ConsoleRecord> console = {Console(30 * kMs + 5, 2, 30, "same"), Console(10 * kMs + 5, 0, 10, "same"),
                                        Console(20 * kMs + 5, 1, 20, "same")};
  KernelLogMatchStats st;
  auto out = MergeKernelLog(kmsg, console, kKernelLogMatchWindowNs, &st);
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].seq, i + 1);
    EXPECT_EQ(out[i].tid, static_cast<int32_t>(10 * (i + 1)));
    EXPECT_EQ(out[i].cpu, static_cast<int32_t>(i));
  }
  EXPECT_EQ(st.matched, 3u);
}

TEST(MergeKernelLog, UnmatchedOnEitherSideIsKeptAndCounted) {
  KernelLogMatchStats st;
  auto out = MergeKernelLog({Kmsg(1, 10 * kMs, "only in kmsg"), Kmsg(2, 20 * kMs, "both")},
                            {Console(20 * kMs, 1, 5, "both"),
                             Console(25 * kMs, 0, 6, "watchdog: BUG: soft lockup - CPU#0 stuck for 23s! [python:77]")},
                            kKernelLogMatchWindowNs, &st);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].source, KernelLogSource::kKmsg);
  EXPECT_EQ(out[0].cpu, -1);
  EXPECT_EQ(out[1].source, KernelLogSource::kBoth);
  EXPECT_EQ(out[2].source, KernelLogSource::kConsole);
  EXPECT_EQ(out[2].cls, KernelLogClass::kSoftLockup);  // classified from its text
  EXPECT_EQ(out[2].tid, 6);
  EXPECT_EQ(out[2].seq, 0u);
  EXPECT_EQ(st.matched, 1u);
  EXPECT_EQ(st.kmsg_unmatched, 1u);
  EXPECT_EQ(st.console_unmatched, 1u);
}

TEST(MergeKernelLog, OutsideTheWindowNothingMatches) {
  KernelLogMatchStats st;
  auto out = MergeKernelLog({Kmsg(1, 5000 * kMs, "late")}, {Console(1000 * kMs, 0, 1, "late")}, 100 * kMs, &st);
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(st.matched, 0u);
  EXPECT_EQ(st.kmsg_unmatched, 1u);
  EXPECT_EQ(st.console_unmatched, 1u);
}

TEST(MergeKernelLog, ACutConsoleTextMatchesItsFullKmsgText) {
  std::string full(400, 'x');
  full += " tail";
  KernelLogMatchStats st;
  auto out = MergeKernelLog({Kmsg(1, 10 * kMs, full)},
                            {Console(10 * kMs, 0, 1, full.substr(0, 255), static_cast<uint32_t>(full.size()))},
                            kKernelLogMatchWindowNs, &st);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].source, KernelLogSource::kBoth);
  EXPECT_EQ(out[0].text, full);  // the full text is kmsg's
}

TEST(MergeKernelLog, ContinuationPiecesOfOneTaskJoinTheirRecord) {
  // pr_cont(): the kernel fires the tracepoint per piece; /dev/kmsg has the
  // joined record. Another task's line in between is its own message.
  KernelLogMatchStats st;
  auto out = MergeKernelLog({Kmsg(1, 10 * kMs, "other line"), Kmsg(2, 10 * kMs, "Modules linked in: a b c")},
                            {Console(10 * kMs + 1, 0, 9, "Modules linked in:"), Console(10 * kMs + 2, 1, 4, "other line"),
                             Console(10 * kMs + 3, 0, 9, " a b"), Console(10 * kMs + 4, 0, 9, " c")},
                            kKernelLogMatchWindowNs, &st);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(st.matched, 2u);
  EXPECT_EQ(st.continuations, 2u);
  EXPECT_EQ(st.console_unmatched, 0u);
  EXPECT_EQ(out[0].text, "Modules linked in: a b c");
  EXPECT_EQ(out[0].tid, 9);
  EXPECT_EQ(out[1].tid, 4);
}

TEST(MergeKernelLog, APrefixWithoutItsContinuationIsNoMatch) {
  // "abc" is not "ab" + pieces: the short record stays on its own.
  KernelLogMatchStats st;
  auto out = MergeKernelLog({Kmsg(1, 10 * kMs, "abc")}, {Console(10 * kMs, 0, 1, "ab")}, kKernelLogMatchWindowNs, &st);
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(st.matched, 0u);
}

TEST(KernelLogSource, NamesRoundTrip) {
  for (auto s : {KernelLogSource::kKmsg, KernelLogSource::kConsole, KernelLogSource::kBoth})
    EXPECT_EQ(ParseKernelLogSource(KernelLogSourceName(s)), s);
  EXPECT_FALSE(ParseKernelLogSource("syslog"));
}

}  // namespace
}  // namespace gpunoise::model
