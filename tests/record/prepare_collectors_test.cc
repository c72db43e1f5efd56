#include "record/prepare_collectors.h"

#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "bpf/net.h"
}

#include "collect/record_decoder.h"
#include "record/record_intake.h"
#include "record/record_session.h"

namespace gpunoise::record {
namespace {

const std::vector<int> kOnline = {0, 1, 2, 3};

TEST(PlanRecord, RecordsEveryOnlineCpuWithoutACpuFilter) {
  RecordOptions options;
  auto plan = PlanRecord(options, kOnline);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->cpus, kOnline);
}

TEST(PlanRecord, RecordsOnlyTheFilteredCpus) {
  RecordOptions options;
  options.filters.cpus = {1, 3};
  auto plan = PlanRecord(options, kOnline);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->cpus, (std::vector<int>{1, 3}));
}

TEST(PlanRecord, RejectsACpuThatIsNotOnline) {
  RecordOptions options;
  options.filters.cpus = {2, 5};
  auto plan = PlanRecord(options, kOnline);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().message, "CPU 5 is not online (online: 0-3)");
}

TEST(PlanRecord, SizesTheRingsFromTheCpuCountUnlessGiven) {
  RecordOptions options;
  auto plan = PlanRecord(options, kOnline);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->ring_bytes_per_cpu, DefaultRingBytesPerCpu(4));
  options.ring_bytes_per_cpu = 1 << 20;
  plan = PlanRecord(options, kOnline);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->ring_bytes_per_cpu, 1u << 20);
}

TEST(DefaultRingBytesPerCpu, HalvesPerCpuToStayInTheBudgetDownToAFloor) {
  EXPECT_EQ(DefaultRingBytesPerCpu(4), 4ull << 20);
  EXPECT_EQ(DefaultRingBytesPerCpu(64), 4ull << 20);    // 256 MiB in all
  EXPECT_EQ(DefaultRingBytesPerCpu(128), 2ull << 20);   // halved to fit
  EXPECT_EQ(DefaultRingBytesPerCpu(4096), 256ull << 10);  // not below 256 KiB
}

TEST(PlanRecord, TheDefaultGroupsAskForEveryCheapCollector) {
  RecordOptions options;
  auto plan = PlanRecord(options, kOnline);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->sched);
  EXPECT_TRUE(plan->hardirq);
  EXPECT_TRUE(plan->softirq);
  EXPECT_TRUE(plan->net);
  EXPECT_FALSE(plan->net_packets);
  EXPECT_TRUE(plan->node);
  // Switches and wakeups in batches; softirq entries wait for their exits.
  EXPECT_TRUE(plan->batch_sched);
  EXPECT_FALSE(plan->batch_irq);
}

TEST(PlanRecord, NetPacketsAloneAlsoRecordsTheNetCounters) {
  RecordOptions options;
  options.event_groups = {"net-packets"};
  options.batching = BatchMode::kNone;
  auto plan = PlanRecord(options, kOnline);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->sched);
  EXPECT_FALSE(plan->hardirq);
  EXPECT_FALSE(plan->softirq);
  EXPECT_TRUE(plan->net);
  EXPECT_TRUE(plan->net_packets);
  EXPECT_FALSE(plan->node);
  EXPECT_FALSE(plan->batch_sched);
  EXPECT_FALSE(plan->batch_irq);
}

TEST(PlanRecord, BatchingAllAlsoBatchesTheIrqCollector) {
  RecordOptions options;
  options.batching = BatchMode::kAll;
  auto plan = PlanRecord(options, kOnline);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->batch_sched);
  EXPECT_TRUE(plan->batch_irq);
}

TEST(PlanRecord, TaskFiltersTurnTheSwitchChainCheckOff) {
  RecordOptions options;
  EXPECT_TRUE(PlanRecord(options, kOnline)->check_switch_chain);
  options.filters.pids = {42};
  EXPECT_FALSE(PlanRecord(options, kOnline)->check_switch_chain);
  options.filters.pids.clear();
  options.filters.cgroup_id = 7;
  EXPECT_FALSE(PlanRecord(options, kOnline)->check_switch_chain);
}

TEST(CheckSomeCollectorStarted, FailsNamingEveryReasonWhenAllAreDisabled) {
  std::vector<std::string_view> names = {"sched", "irq"};
  std::vector<model::CollectorReport> reports(2);
  reports[0].state = model::CollectorState::kDisabled;
  reports[0].reason = "no BTF";
  reports[1].state = model::CollectorState::kDisabled;
  reports[1].reason = "tracepoint irq:irq_handler_entry is missing";
  Status st = CheckSomeCollectorStarted(names, reports);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message,
            "no collector could start (sched: no BTF; irq: tracepoint irq:irq_handler_entry is missing;)");
}

TEST(CheckSomeCollectorStarted, SucceedsWhenOneCollectorIsActive) {
  std::vector<std::string_view> names = {"sched", "irq"};
  std::vector<model::CollectorReport> reports(2);
  reports[0].state = model::CollectorState::kDisabled;
  reports[1].state = model::CollectorState::kActive;
  EXPECT_TRUE(CheckSomeCollectorStarted(names, reports).ok());
}

TEST(AssignRecordOwners, EachKindBelongsToTheCollectorOfItsName) {
  RecordIntake intake(0);
  std::vector<std::string_view> names = {"irq", "sched"};
  AssignRecordOwners(names, intake);
  EXPECT_EQ(intake.OwnerOf(GN_REC_SCHED_SWITCH), 1);
  EXPECT_EQ(intake.OwnerOf(GN_REC_TASK_RENAME), 1);
  EXPECT_EQ(intake.OwnerOf(GN_REC_IRQ_ENTRY), 0);
  EXPECT_EQ(intake.OwnerOf(GN_REC_SOFTIRQ_EXIT), 0);
  // No napi collector in the list: its kinds have no owner.
  EXPECT_EQ(intake.OwnerOf(GN_REC_NAPI_POLL), -1);
}

}  // namespace
}  // namespace gpunoise::record
