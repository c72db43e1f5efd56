// RecordIntake's unpacking of batches (GN_REC_BATCH, bpf/batch.bpf.h).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collect/batch_flush.h"
#include "record/drain.h"
#include "record/record_intake.h"

extern "C" {
#include "bpf/sched.h"
}

namespace gpunoise::record {
namespace {

template <typename T>
void Append(std::vector<uint8_t>& out, const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(v));
}

gn_sched_switch Switch(uint64_t ts, uint32_t next) {
  gn_sched_switch r{};
  r.hdr.ts = ts;
  r.hdr.kind = GN_REC_SCHED_SWITCH;
  r.hdr.tid = 7;
  r.next_tid = next;
  r.next_prio = 120;
  std::memcpy(r.next_comm, "worker", 7);
  return r;
}

gn_sched_wake Waking(uint64_t ts, uint32_t tid, uint16_t flags) {
  gn_sched_wake r{};
  r.hdr.ts = ts;
  r.hdr.kind = GN_REC_SCHED_WAKING;
  r.hdr.flags = flags;
  r.hdr.tid = 7;
  r.tid = tid;
  r.target_cpu = 1;
  return r;
}

// Records in the batch's slots: each at the start of its own 56 bytes, as
// the sched collector batches them.
constexpr uint16_t kSlot = 56;
template <typename T>
void AppendSlot(std::vector<uint8_t>& out, const T& v) {
  static_assert(sizeof(T) <= kSlot);
  size_t at = out.size();
  Append(out, v);
  out.resize(at + kSlot, 0xee);
}

// A batch as gn_batch_flush writes it.
std::vector<uint8_t> BatchOf(uint32_t cpu, uint64_t flush_ts, uint64_t first_seq, uint32_t count,
                             const std::vector<uint8_t>& records) {
  gn_batch_hdr h{};
  h.hdr.ts = flush_ts;
  h.hdr.kind = GN_REC_BATCH;
  h.count = static_cast<uint16_t>(count);
  h.slot = kSlot;
  h.cpu = static_cast<uint16_t>(cpu);
  h.first_seq = first_seq;
  h.end_seq = first_seq + count;
  std::vector<uint8_t> out;
  Append(out, h);
  out.insert(out.end(), records.begin(), records.end());
  return out;
}

std::vector<model::Event> WrittenEvents(RecordIntake& intake, uint32_t cpu) {
  auto span = intake.batches()[cpu].staging.Writable(false, true);
  std::vector<model::Event> out(span.begin(), span.end());
  intake.batches()[cpu].staging.Written();
  return out;
}

TEST(RecordIntakeBatch, ABatchUnpacksIntoTheRecordsTheDirectPathGives) {
  gn_sched_switch s1 = Switch(100, 8);
  gn_sched_wake w = Waking(101, 9, GN_FLAG_HARDIRQ);  // nested in an irq
  gn_sched_switch s2 = Switch(102, 9);
  RecordIntake direct(1), batched(1);
  for (RecordIntake* in : {&direct, &batched}) in->SetOwner(GN_REC_SCHED_SWITCH, 0), in->SetOwner(GN_REC_SCHED_WAKING, 0);
  std::vector<uint8_t> a, b, c, all;
  Append(a, s1);
  Append(b, w);
  Append(c, s2);
  for (auto* r : {&a, &b, &c}) direct.OnRecord(1, *r);
  AppendSlot(all, s1);
  AppendSlot(all, w);
  AppendSlot(all, s2);
  batched.set_batching(1);
  batched.OnRecord(1, BatchOf(1, 200, 0, 3, all));
  EXPECT_EQ(batched.batches()[1].events_total, 3u);
  EXPECT_EQ(batched.collector_events(0), direct.collector_events(0));
  EXPECT_EQ(batched.batches()[1].drained, 3u) << "its records against the drain's budget, as if unbatched";
  EXPECT_EQ(batched.batches()[1].batches, 1u);
  std::vector<model::Event> d = WrittenEvents(direct, 1), e = WrittenEvents(batched, 1);
  ASSERT_EQ(d.size(), 3u);
  ASSERT_EQ(e.size(), 3u);
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(d[i].ts, e[i].ts);
    EXPECT_EQ(d[i].cpu, e[i].cpu);
    EXPECT_EQ(d[i].tid, e[i].tid);
    EXPECT_EQ(d[i].common_flags, e[i].common_flags);
    EXPECT_EQ(d[i].payload.index(), e[i].payload.index());
  }
  const auto& sw = std::get<model::SchedSwitch>(e[2].payload);
  EXPECT_EQ(sw.next_tid, 9);
  EXPECT_EQ(sw.next_comm.view(), "worker");
  EXPECT_EQ(std::get<model::SchedWaking>(e[1].payload).tid, 9);
}

TEST(RecordIntakeBatch, AnEmptyBatchOnlyMovesTheFloor) {
  RecordIntake intake(0);
  intake.set_batching(1);
  intake.OnRecord(0, BatchOf(0, 500, 0, 0, {}));
  EXPECT_EQ(intake.batches()[0].events_total, 0u);
  EXPECT_EQ(intake.batches()[0].decode_errors, 0u);
  intake.batches()[0].staging.Writable(false);
  intake.batches()[0].staging.Written();
  EXPECT_EQ(intake.batches()[0].staging.floor(), 500u);
}

TEST(RecordIntakeBatch, ABatchFromAnotherCpuIsCountedAsMalformed) {
  RecordIntake intake(1);
  std::vector<uint8_t> recs;
  AppendSlot(recs, Switch(100, 8));
  AppendSlot(recs, Switch(101, 9));
  intake.OnRecord(0, BatchOf(1, 200, 0, 2, recs));
  EXPECT_EQ(intake.batches()[0].decode_errors, 2u);
  EXPECT_EQ(intake.batches()[0].staging.staged(), 0u);
}

TEST(RecordIntakeBatch, WhatABatchCannotSplitIsCountedNotDropped) {
  RecordIntake intake(0);
  std::vector<uint8_t> recs;
  AppendSlot(recs, Switch(100, 8));
  AppendSlot(recs, Switch(101, 9));
  recs.resize(recs.size() - 10);  // the second slot cut short
  intake.OnRecord(0, BatchOf(0, 200, 0, 2, recs));
  EXPECT_EQ(intake.batches()[0].events_total, 1u);
  EXPECT_EQ(intake.batches()[0].decode_errors, 1u);
  // A kind no batch may hold (variable size) ends the walk.
  std::vector<uint8_t> odd;
  gn_header h{};
  h.kind = GN_REC_PROCESS_EXEC;
  AppendSlot(odd, h);
  AppendSlot(odd, Switch(102, 9));
  intake.OnRecord(0, BatchOf(0, 300, 2, 2, odd));
  EXPECT_EQ(intake.batches()[0].decode_errors, 3u);
  // Not even a header.
  intake.OnRecord(0, std::span<const uint8_t>(odd.data(), 20));
  EXPECT_EQ(intake.batches()[0].decode_errors, 4u);
}

TEST(RecordIntakeBatch, ASequenceGapCountsTheRecordsOfALostBatch) {
  RecordIntake intake(0);
  std::vector<uint8_t> one;
  AppendSlot(one, Switch(100, 8));
  intake.OnRecord(0, BatchOf(0, 150, 0, 1, one));
  // Records 1..63 went in a batch the ring had no room for.
  intake.OnRecord(0, BatchOf(0, 250, 64, 1, one));
  EXPECT_EQ(intake.batches()[0].batch_seq_missing, 63u);
  EXPECT_EQ(intake.batches()[0].batches, 2u);
}

TEST(RecordIntakeBatch, ABatchFromACpuOutsideTheRecordingCountsItsRecords) {
  RecordIntake intake(0);
  std::vector<uint8_t> recs;
  AppendSlot(recs, Switch(100, 8));
  AppendSlot(recs, Switch(101, 9));
  intake.OnRecord(3, BatchOf(3, 200, 0, 2, recs));
  EXPECT_EQ(intake.records_outside_cpus(), 2u);
}

TEST(RecordIntakeBatch, AnIdleBatchMovesTheFloorOnceTheIntakeHasReadItsStreamThatFar) {
  RecordIntake intake(1);
  intake.set_batching(1);
  std::vector<uint8_t> one;
  AppendSlot(one, Switch(100, 8));
  // CPU 0's stream is read up to seq 1; then a direct record.
  intake.OnRecord(0, BatchOf(0, 150, 0, 1, one));
  std::vector<uint8_t> direct;
  Append(direct, Switch(300, 9));
  intake.OnRecord(0, direct);
  // CPU 1 has read no batch of the stream, but its state word says one went out.
  intake.OnRecord(1, direct);
  std::vector<gn_batch_word> words(GN_MAX_CPUS);
  words[0].seq = 1;
  words[1].seq = 64;
  collect::BatchFlusher f(-1, {0, 1}, 0, words.data());
  f.FlushAll();
  ASSERT_EQ(f.idle().size(), 2u);
  TakeIdleBatches(f, intake.batches());
  // CPU 0: drained up to the read, so the direct record after the batch goes out.
  auto cpu0 = intake.batches()[0].staging.Writable(false);
  EXPECT_EQ(cpu0.size(), 2u);
  intake.batches()[0].staging.Written();
  // CPU 1: its batch may still be in the ring: everything waits, and the
  // next drain flushes it.
  EXPECT_EQ(intake.batches()[1].staging.Writable(false).size(), 0u);
  intake.batches()[1].staging.Written();
  uint64_t runs = f.runs();
  f.FlushAll();
  EXPECT_EQ(f.runs(), runs + 1);
}

}  // namespace
}  // namespace gpunoise::record
