#include "record/loss_accounting.h"

#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "bpf/net.h"
}

#include "record/record_intake.h"

namespace gpunoise::record {
namespace {

std::vector<std::vector<uint64_t>> NoLoss(size_t cpus) {
  return std::vector<std::vector<uint64_t>>(cpus, std::vector<uint64_t>(GN_REC_KIND_MAX, 0));
}

TEST(AccountLoss, SumsEachCpusRingLossByKindName) {
  RecordIntake intake(1);
  auto lost = NoLoss(2);
  lost[1][GN_REC_SCHED_SWITCH] = 5;
  lost[1][GN_REC_IRQ_ENTRY] = 2;
  std::vector<int> cpus = {0, 1};
  LossAccount account = AccountLoss(lost, intake, cpus, 0, nullptr);
  ASSERT_EQ(account.cpus.size(), 2u);
  EXPECT_EQ(account.cpus[0].cpu, 0u);
  EXPECT_EQ(account.cpus[0].lost, 0u);
  EXPECT_EQ(account.cpus[1].cpu, 1u);
  EXPECT_EQ(account.cpus[1].lost, 7u);
  EXPECT_EQ(account.cpus[1].lost_by_kind.at("sched_switch"), 5u);
  EXPECT_EQ(account.cpus[1].lost_by_kind.at("irq_handler_entry"), 2u);
}

TEST(AccountLoss, ChargesRingLossToTheCollectorOwningTheKind) {
  RecordIntake intake(1);
  intake.SetOwner(GN_REC_SCHED_SWITCH, 0);
  intake.SetOwner(GN_REC_IRQ_ENTRY, 1);
  auto lost = NoLoss(2);
  lost[0][GN_REC_SCHED_SWITCH] = 3;
  lost[1][GN_REC_SCHED_SWITCH] = 4;
  lost[1][GN_REC_IRQ_ENTRY] = 2;
  lost[1][GN_REC_NAPI_POLL] = 9;  // no owner: in the CPU's row only
  std::vector<int> cpus = {0, 1};
  LossAccount account = AccountLoss(lost, intake, cpus, 2, nullptr);
  EXPECT_EQ(account.collector_lost, (std::vector<uint64_t>{7, 2}));
  EXPECT_EQ(account.cpus[1].lost, 15u);
}

TEST(AccountLoss, CopiesWhatTheIntakeReadAndCouldNotWrite) {
  RecordIntake intake(1);
  CpuBatch& b = intake.batches()[1];
  b.events_total = 100;
  b.bytes_total = 4000;
  b.decode_errors = 2;
  b.CountUnwritten("sched_switch", 6);
  std::vector<int> cpus = {0, 1};
  LossAccount account = AccountLoss(NoLoss(2), intake, cpus, 0, nullptr);
  ASSERT_EQ(account.cpus.size(), 2u);
  const model::CpuLoss& row = account.cpus[1];
  EXPECT_EQ(row.events, 100u);
  EXPECT_EQ(row.bytes, 4000u);
  EXPECT_EQ(row.decode_errors, 2u);
  EXPECT_EQ(row.unwritten, 6u);
  EXPECT_EQ(row.unwritten_by_kind.at("sched_switch"), 6u);
}

TEST(AccountLoss, ACpuOutsideTheRecordingHasARowOnlyWhenItLostRecords) {
  RecordIntake intake(3);  // stagings for CPUs 0..3
  std::vector<int> cpus = {0, 2};
  auto lost = NoLoss(5);
  lost[4][GN_REC_SCHED_SWITCH] = 1;  // came online meanwhile: no ring, no staging
  LossAccount account = AccountLoss(lost, intake, cpus, 0, nullptr);
  std::vector<uint32_t> rows;
  for (const model::CpuLoss& row : account.cpus) rows.push_back(row.cpu);
  EXPECT_EQ(rows, (std::vector<uint32_t>{0, 2, 4}));
  EXPECT_EQ(account.cpus[2].lost, 1u);
}

TEST(AccountLoss, UnseenSwitchesComeFromTheChainOnlyWhenItWasChecked) {
  // Two switches on CPU 0 that do not chain: the second's prev is not the
  // first's next, so the kernel did not report one in between.
  model::SwitchChain chain;
  model::Event a;
  a.ts = 100;
  a.cpu = 0;
  a.payload = model::SchedSwitch{.prev_tid = 1, .next_tid = 2};
  model::Event b = a;
  b.ts = 200;
  b.payload = model::SchedSwitch{.prev_tid = 3, .next_tid = 4};
  chain.Observe(a);
  chain.Observe(b);
  ASSERT_EQ(chain.breaks(0), 1u);
  RecordIntake intake(0);
  std::vector<int> cpus = {0};
  EXPECT_EQ(AccountLoss(NoLoss(1), intake, cpus, 0, &chain).cpus[0].unseen_switches, 1u);
  EXPECT_EQ(AccountLoss(NoLoss(1), intake, cpus, 0, nullptr).cpus[0].unseen_switches, 0u);
}

}  // namespace
}  // namespace gpunoise::record
