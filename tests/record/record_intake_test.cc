#include "record/record_intake.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

extern "C" {
#include "bpf/irq.h"
#include "bpf/sched.h"
}

#include "record/switch_record.h"

namespace gpunoise::record {
namespace {

using test_records::SwitchRecord;

TEST(RecordIntake, ARecordIsStagedOnItsCpuAndCountedForItsCollector) {
  RecordIntake intake(1);
  intake.SetOwner(GN_REC_SCHED_SWITCH, 0);
  auto rec = SwitchRecord(100);
  intake.OnRecord(1, rec);
  EXPECT_EQ(intake.batches()[1].staging.staged(), 1u);
  EXPECT_EQ(intake.batches()[1].events_total, 1u);
  EXPECT_EQ(intake.batches()[1].bytes_total, rec.size());
  EXPECT_EQ(intake.collector_events(0), 1u);
}

// The trace holds the raise the entry carries as an event of its own.
TEST(RecordIntake, ASoftirqEntryThatCarriesItsRaiseCountsAsTwoEvents) {
  RecordIntake intake(0);
  intake.SetOwner(GN_REC_SOFTIRQ_ENTRY, 0);
  gn_softirq entry{};
  entry.hdr.ts = 100;
  entry.hdr.kind = GN_REC_SOFTIRQ_ENTRY;
  entry.vec = GN_SOFTIRQ_NET_RX;
  entry.raise_wait_ns = 700;
  gn_softirq unraised = entry;
  unraised.hdr.ts = 200;
  unraised.raise_wait_ns = 0;
  for (const gn_softirq& r : {entry, unraised}) {
    std::vector<uint8_t> bytes(sizeof(r));
    std::memcpy(bytes.data(), &r, sizeof(r));
    intake.OnRecord(0, bytes);
  }
  EXPECT_EQ(intake.batches()[0].staging.staged(), 2u);
  EXPECT_EQ(intake.batches()[0].events_total, 3u);
  EXPECT_EQ(intake.collector_events(0), 3u);
}

// A softirq written as one record at its exit is staged as its entry and its
// exit, in that order, and counts as the events the trace holds.
TEST(RecordIntake, ASoftirqSliceIsStagedAsItsEntryAndItsExit) {
  RecordIntake intake(0);
  intake.SetOwner(GN_REC_SOFTIRQ_SLICE, 0);
  gn_softirq_slice r{};
  r.hdr.ts = 900;
  r.hdr.kind = GN_REC_SOFTIRQ_SLICE;
  r.entry_ts = 800;
  r.vec = GN_SOFTIRQ_NET_RX;
  r.raise_wait_ns = 50;  // the raise is a third event in the trace
  std::vector<uint8_t> bytes(sizeof(r));
  std::memcpy(bytes.data(), &r, sizeof(r));
  intake.OnRecord(0, bytes);
  const CpuBatch& b = intake.batches()[0];
  EXPECT_EQ(b.staging.staged(), 2u);
  EXPECT_EQ(b.events_total, 3u);
  EXPECT_EQ(b.drained, 2u) << "the drain's budget counts ring events";
  EXPECT_EQ(intake.collector_events(0), 3u);
  model::EventView view = intake.batches()[0].staging.Writable(false);
  ASSERT_EQ(view.size(), 2u);
  EXPECT_EQ(view[0].ts, 800u);
  EXPECT_TRUE(std::holds_alternative<model::SoftirqEntry>(view[0].payload));
  EXPECT_EQ(view[1].ts, 900u);
  EXPECT_TRUE(std::holds_alternative<model::SoftirqExit>(view[1].payload));
}

TEST(RecordIntake, AMalformedRecordIsCountedOnItsCpuNotDropped) {
  RecordIntake intake(1);
  auto rec = SwitchRecord(100);
  rec.resize(sizeof(gn_header) + 4);  // shorter than its kind's layout
  intake.OnRecord(0, rec);
  gn_header unknown{};
  unknown.kind = 200;  // a kind this build does not know
  std::vector<uint8_t> bytes(sizeof(unknown));
  std::memcpy(bytes.data(), &unknown, sizeof(unknown));
  intake.OnRecord(0, bytes);
  intake.OnRecord(0, std::span<const uint8_t>(bytes.data(), 3));  // not even a header
  EXPECT_EQ(intake.batches()[0].decode_errors, 3u);
  EXPECT_EQ(intake.batches()[0].staging.staged(), 0u);
  EXPECT_EQ(intake.batches()[0].drained, 3u) << "they count against the drain's budget";
}

TEST(RecordIntake, ARecordFromACpuOutsideTheRecordingIsCounted) {
  RecordIntake intake(1);
  auto rec = SwitchRecord(100);
  intake.OnRecord(2, rec);
  intake.OnRecord(1000, rec);
  EXPECT_EQ(intake.records_outside_cpus(), 2u);
  for (const CpuBatch& b : intake.batches()) EXPECT_EQ(b.events_total, 0u);
}

TEST(RecordIntake, UnwrittenEventsAreCountedByKind) {
  CpuBatch b;
  model::Event sw, wk;
  sw.payload = model::SchedSwitch{};
  model::SchedWaking w;
  w.is_new_task = true;
  wk.payload = w;
  std::vector<model::Event> events = {sw, sw, wk};
  b.CountUnwritten(events);
  EXPECT_EQ(b.unwritten, 3u);
  EXPECT_EQ(b.unwritten_by_kind["sched_switch"], 2u);
  EXPECT_EQ(b.unwritten_by_kind["sched_wakeup_new"], 1u);
}

}  // namespace
}  // namespace gpunoise::record
