#include "record/finish.h"

#include <gtest/gtest.h>

namespace gpunoise::record {
namespace {

RecordResult TwoSecondsOnTwoCpus() {
  RecordResult r;
  r.path = "/tmp/out.pftrace";
  r.bytes_written = 3 << 20;
  r.session.start_ts = 1'000'000'000;
  r.session.end_ts = 3'000'000'000;
  model::CpuLoss cpu0;
  cpu0.cpu = 0;
  model::CpuLoss cpu1;
  cpu1.cpu = 1;
  r.session.cpus = {cpu0, cpu1};
  model::CollectorReport sched;
  sched.name = "sched";
  sched.events = 1200;
  model::CollectorReport irq;
  irq.name = "irq";
  irq.state = model::CollectorState::kDisabled;
  r.session.collectors = {sched, irq};
  return r;
}

TEST(FormatSummary, ListsEventsPerCollectorAndTheDisabledOnes) {
  EXPECT_EQ(FormatSummary(TwoSecondsOnTwoCpus()),
            "gpunoise: recorded 2.0 s on 2 CPUs to /tmp/out.pftrace (3.0 MiB): sched 1200 events, irq disabled; "
            "0 lost events");
}

TEST(FormatSummary, CountsEveryKindOfLossAndTheUnseenSwitches) {
  RecordResult r = TwoSecondsOnTwoCpus();
  r.session.cpus[0].lost = 5;
  r.session.cpus[0].decode_errors = 1;
  r.session.cpus[1].unwritten = 10;
  r.session.cpus[1].unseen_switches = 3;
  r.session.bpf_recursion_misses = 2;
  r.session.records_outside_cpus = 4;
  EXPECT_EQ(FormatSummary(r),
            "gpunoise: recorded 2.0 s on 2 CPUs to /tmp/out.pftrace (3.0 MiB): sched 1200 events, irq disabled; "
            "22 lost events (2 of them program runs the kernel skipped), 3 context switches the kernel did "
            "not report");
}

TEST(FormatSummary, NamesTheSoftirqsTheKernelRanWithoutReportingApartFromLoss) {
  RecordResult r = TwoSecondsOnTwoCpus();
  r.session.softirqs_audited = true;
  r.session.cpus[1].unreported_softirqs[static_cast<size_t>(model::SoftirqVec::kNetRx)] = 4;
  r.session.cpus[0].unreported_softirqs[static_cast<size_t>(model::SoftirqVec::kRcu)] = 1;
  EXPECT_EQ(FormatSummary(r),
            "gpunoise: recorded 2.0 s on 2 CPUs to /tmp/out.pftrace (3.0 MiB): sched 1200 events, irq disabled; "
            "0 lost events, 5 softirqs the kernel ran without reporting (its own counts say so)");
  r.session.cpus[1].unreported_softirqs = {};
  EXPECT_NE(FormatSummary(r).find(", 1 softirq the kernel ran without reporting"), std::string::npos)
      << FormatSummary(r);
}

TEST(FormatSummary, ARingLossSaysWhenItWasFirstFoundAndTheLongestTheRingsWentUnread) {
  RecordResult r = TwoSecondsOnTwoCpus();
  r.session.cpus[1].lost = 58073;
  r.session.first_ring_loss_seen = r.session.start_ts + 1'234'000'000;
  r.session.unread_before_loss_ns = 118'400'000;
  r.session.unread_before_loss_from = r.session.start_ts + 1'100'000'000;
  EXPECT_NE(FormatSummary(r).find("; 58073 lost events (58073 with the ring full, first found at +1.234 s; before a "
                                  "drain that found loss the rings had gone up to 118.4 ms unread, from +1.100 s)"),
            std::string::npos)
      << FormatSummary(r);
  r.session.cpus[1].lost = 0;
  EXPECT_EQ(FormatSummary(r).find("unread"), std::string::npos) << FormatSummary(r);
}

TEST(FormatSummary, NamesTheCompressionAndTheSizeBeforeIt) {
  RecordResult r = TwoSecondsOnTwoCpus();
  r.compression = perfetto::TraceCompression::kZlib;
  r.packet_bytes = 15 << 20;
  EXPECT_NE(FormatSummary(r).find("(3.0 MiB; 15.0 MiB before zlib)"), std::string::npos) << FormatSummary(r);
}

TEST(FormatSummary, SaysHowManyBlocksWentUncompressedForWantOfSpareCpu) {
  RecordResult r = TwoSecondsOnTwoCpus();
  r.compression = perfetto::TraceCompression::kZlib;
  r.packet_bytes = 15 << 20;
  r.blocks_sealed = 60;
  r.blocks_plain = 12;
  EXPECT_NE(FormatSummary(r).find(
                "(3.0 MiB; 15.0 MiB before zlib; 12 of 60 blocks written uncompressed, the node had no CPU to spare)"),
            std::string::npos)
      << FormatSummary(r);
}

TEST(FormatSummary, AppendsTheNetworkAndNodeLinesBelow) {
  RecordResult r = TwoSecondsOnTwoCpus();
  r.net_summary = "net: 2 devices";
  r.node_summary = "node: steal 0.0%";
  std::string text = FormatSummary(r);
  EXPECT_NE(text.find("0 lost events\nnet: 2 devices\nnode: steal 0.0%"), std::string::npos) << text;
  r.net_summary.clear();
  text = FormatSummary(r);
  EXPECT_NE(text.find("0 lost events\nnode: steal 0.0%"), std::string::npos) << text;
}

TEST(FormatSummary, SaysWhereTheDrainYieldedAndHowOftenItWentBack) {
  RecordResult r = TwoSecondsOnTwoCpus();
  r.net_summary = "net: 2 devices";
  EXPECT_EQ(FormatSummary(r).find("drain:"), std::string::npos) << "it did not yield: no line";
  r.session.drain_yielded = true;
  r.session.drain_idle_from = 1'300'000'000;
  r.session.drain_raises = 4;
  r.session.drain_raised_for_late = 1;
  r.session.drain_raised_for_doorbell = 2;
  r.session.drain_raised_ns = 1'500'000'000;
  std::string text = FormatSummary(r);
  EXPECT_NE(text.find("; 0 lost events\ndrain: SCHED_IDLE while its buffers had room (from +0.3 s); back to SCHED_OTHER "
                      "4 times (1 for a late turn, 2 for a doorbell), 1.5 s in all\nnet: 2 devices"),
            std::string::npos)
      << text;
}

TEST(FormatSummary, AnEmptyRecordingLastsZeroSeconds) {
  RecordResult r = TwoSecondsOnTwoCpus();
  r.session.end_ts = 0;
  EXPECT_EQ(FormatSummary(r).rfind("gpunoise: recorded 0.0 s on 2 CPUs", 0), 0u);
}

}  // namespace
}  // namespace gpunoise::record
