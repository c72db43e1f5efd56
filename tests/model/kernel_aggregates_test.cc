#include "model/kernel_aggregates.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

AggregateSnapshot Snapshot(uint64_t ts, uint64_t net_rx_count, uint64_t net_rx_ns) {
  AggregateSnapshot s;
  s.ts = ts;
  SoftirqCpuCounters c;
  c.cpu = 1;
  c.count[static_cast<int>(SoftirqVec::kNetRx)] = net_rx_count;
  c.ns[static_cast<int>(SoftirqVec::kNetRx)] = net_rx_ns;
  s.softirqs.push_back(c);
  return s;
}

TEST(KernelAggregates, DeltaSubtractsSoftirqCountersPerCpu) {
  AggregateSnapshot d = Delta(Snapshot(1, 100, 5000), Snapshot(2, 150, 9000));
  ASSERT_EQ(d.softirqs.size(), 1u);
  EXPECT_EQ(d.ts, 2u);
  EXPECT_EQ(d.softirqs[0].cpu, 1u);
  EXPECT_EQ(d.softirqs[0].count[3], 50u);
  EXPECT_EQ(d.softirqs[0].ns[3], 4000u);
}

TEST(KernelAggregates, DeltaCountsNewEntriesFromZero) {
  AggregateSnapshot earlier;
  AggregateSnapshot later = Snapshot(5, 7, 70);
  later.hardirqs.push_back({0, 24, 3, 300});
  AggregateSnapshot d = Delta(earlier, later);
  ASSERT_EQ(d.softirqs.size(), 1u);
  EXPECT_EQ(d.softirqs[0].count[3], 7u);
  ASSERT_EQ(d.hardirqs.size(), 1u);
  EXPECT_EQ(d.hardirqs[0].irq, 24);
  EXPECT_EQ(d.hardirqs[0].ns, 300u);
}

TEST(KernelAggregates, DeltaTreatsAFallingCounterAsReset) {
  // A map entry deleted (device forgotten) and created again starts at 0.
  AggregateSnapshot d = Delta(Snapshot(1, 1000, 100000), Snapshot(2, 10, 1000));
  EXPECT_EQ(d.softirqs[0].count[3], 10u);
  EXPECT_EQ(d.softirqs[0].ns[3], 1000u);
}

TEST(KernelAggregates, DeltaDropsEntriesThatAreGone) {
  AggregateSnapshot earlier;
  earlier.hardirqs.push_back({0, 24, 3, 300});
  AggregateSnapshot d = Delta(earlier, AggregateSnapshot{});
  EXPECT_TRUE(d.hardirqs.empty());
}

TEST(KernelAggregates, DeltaOfFocusSamplesAndKernelCounters) {
  AggregateSnapshot a, b;
  FocusCpuCounters f;
  f.cpu = 2;
  f.switches = 10;
  f.preempted_by[static_cast<int>(TaskClass::kOther)] = 3;
  f.softirq_ns = 100;
  a.focus.push_back(f);
  f.switches = 25;
  f.preempted_by[static_cast<int>(TaskClass::kOther)] = 8;
  f.softirq_ns = 400;
  b.focus.push_back(f);
  SampleCounter s;
  s.cpu = 2;
  s.comm = TaskComm("hog");
  s.count = 4;
  a.samples.push_back(s);
  s.count = 9;
  b.samples.push_back(s);
  s.comm = TaskComm("new");
  s.count = 2;
  b.samples.push_back(s);
  a.kernel["warn_count"] = 1;
  b.kernel["warn_count"] = 3;
  b.kernel["softlockup_count"] = 0;
  AggregateSnapshot d = Delta(a, b);
  ASSERT_EQ(d.focus.size(), 1u);
  EXPECT_EQ(d.focus[0].switches, 15u);
  EXPECT_EQ(d.focus[0].preempted_by[3], 5u);
  EXPECT_EQ(d.focus[0].softirq_ns, 300u);
  ASSERT_EQ(d.samples.size(), 2u);
  EXPECT_EQ(d.samples[0].count, 5u);
  EXPECT_EQ(d.samples[1].count, 2u);
  EXPECT_EQ(d.kernel["warn_count"], 2u);
  EXPECT_EQ(d.kernel["softlockup_count"], 0u);
}

TEST(KernelAggregates, DeltaOfRunqueueCulpritsPerCpuAndTidLeavesOutIdleOnes) {
  AggregateSnapshot a, b;
  RunqueueCulprit c;
  c.cpu = 1;
  c.tid = 4242;
  c.comm = TaskComm("hog");
  c.wait_ns = 1000;
  c.waits = 2;
  a.culprits.push_back(c);
  b.culprits.push_back(c);  // nothing new on CPU 1
  c.cpu = 0;
  c.wait_ns = 700;
  c.waits = 1;
  b.culprits.push_back(c);  // new on CPU 0: from zero
  c.tid = 99;
  c.cpu = 1;
  c.wait_ns = 50;
  a.culprits.push_back(c);  // deleted since (its task exited): gone
  AggregateSnapshot d = Delta(a, b);
  ASSERT_EQ(d.culprits.size(), 1u);
  EXPECT_EQ(d.culprits[0].cpu, 0u);
  EXPECT_EQ(d.culprits[0].tid, 4242);
  EXPECT_EQ(d.culprits[0].wait_ns, 700u);
  EXPECT_EQ(d.culprits[0].comm.view(), "hog");
  FocusCpuCounters f;
  f.cpu = 1;
  f.wait_softirq_ns = 10;
  a.focus.push_back(f);
  f.wait_softirq_ns = 35;
  f.wait_unknown_ns = 4;
  b.focus.push_back(f);
  d = Delta(a, b);
  ASSERT_EQ(d.focus.size(), 1u);
  EXPECT_EQ(d.focus[0].wait_softirq_ns, 25u);
  EXPECT_EQ(d.focus[0].wait_unknown_ns, 4u);
}

TEST(KernelAggregates, TotalRunqueueSumsCpus) {
  AggregateSnapshot s;
  s.runqueue.push_back({0, Log2Histogram{{1, 1}, 2, 10}, Log2Histogram{{0, 1}, 1, 5}});
  s.runqueue.push_back({1, Log2Histogram{{2}, 2, 4}, Log2Histogram{}});
  Log2Histogram all = TotalRunqueue(s, false);
  EXPECT_EQ(all.slots, (std::vector<uint64_t>{3, 1}));
  EXPECT_EQ(all.count, 4u);
  EXPECT_EQ(TotalRunqueue(s, true).count, 1u);
}

}  // namespace
}  // namespace gpunoise::model
