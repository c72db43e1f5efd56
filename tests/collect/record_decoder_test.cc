#include "collect/record_decoder.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "collect/records.h"

namespace gpunoise::collect {
namespace {

template <typename T>
std::span<const uint8_t> Bytes(const T& rec) {
  return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&rec), sizeof(rec));
}

TEST(RecordDecoder, DecodesSchedSwitch) {
  gn_sched_switch r{};
  r.hdr.ts = 123456789;
  r.hdr.kind = GN_REC_SCHED_SWITCH;
  r.hdr.tid = 10;
  r.prev_tgid = 9;
  r.prev_state = 0x100;
  r.next_tid = 20;
  r.next_tgid = 19;
  r.next_prio = 120;
  std::strcpy(r.next_comm, "pt_main_thread");
  model::Event ev;
  ASSERT_EQ(DecodeRecord(Bytes(r), 3, &ev), DecodeResult::kOk);
  EXPECT_EQ(ev.ts, 123456789u);
  EXPECT_EQ(ev.cpu, 3u);
  EXPECT_EQ(ev.tid, 10);
  const auto& s = std::get<model::SchedSwitch>(ev.payload);
  EXPECT_EQ(s.prev_tid, 10);
  EXPECT_EQ(s.prev_state, model::task_state::kPreempted);
  EXPECT_EQ(s.next_tid, 20);
  EXPECT_EQ(s.next_tgid, 19);
  EXPECT_EQ(s.next_comm.view(), "pt_main_thread");
}

TEST(RecordDecoder, DistinguishesWakingFromWakeupNew) {
  gn_sched_wake r{};
  r.hdr.kind = GN_REC_SCHED_WAKEUP_NEW;
  r.tid = 5;
  r.target_cpu = 1;
  model::Event ev;
  ASSERT_EQ(DecodeRecord(Bytes(r), 0, &ev), DecodeResult::kOk);
  EXPECT_TRUE(std::get<model::SchedWaking>(ev.payload).is_new_task);
  r.hdr.kind = GN_REC_SCHED_WAKING;
  ASSERT_EQ(DecodeRecord(Bytes(r), 0, &ev), DecodeResult::kOk);
  EXPECT_FALSE(std::get<model::SchedWaking>(ev.payload).is_new_task);
}

TEST(RecordDecoder, DecodesExecFilenameUpToNul) {
  gn_process_exec r{};
  r.hdr.kind = GN_REC_PROCESS_EXEC;
  r.hdr.tid = 77;
  r.tgid = 77;
  std::strcpy(r.filename, "/usr/bin/python3");
  model::Event ev;
  ASSERT_EQ(DecodeRecord(Bytes(r), 0, &ev), DecodeResult::kOk);
  EXPECT_EQ(std::get<model::ProcessExec>(ev.payload).filename.view(), "/usr/bin/python3");
}

TEST(RecordDecoder, DecodesIrqSoftirqWithItsRaiseWaitAndVectors) {
  gn_irq irq{};
  irq.hdr.kind = GN_REC_IRQ_EXIT;
  irq.irq = 38;
  irq.ret = 1;
  model::Event ev;
  ASSERT_EQ(DecodeRecord(Bytes(irq), 0, &ev), DecodeResult::kOk);
  EXPECT_EQ(std::get<model::IrqExit>(ev.payload).ret, 1);
  gn_softirq sirq{};
  sirq.hdr.kind = GN_REC_SOFTIRQ_ENTRY;
  sirq.vec = GN_SOFTIRQ_NET_RX;
  sirq.raise_wait_ns = 2500;
  ASSERT_EQ(DecodeRecord(Bytes(sirq), 0, &ev), DecodeResult::kOk);
  EXPECT_EQ(std::get<model::SoftirqEntry>(ev.payload).vec, 3u);
  EXPECT_EQ(std::get<model::SoftirqEntry>(ev.payload).raise_wait_ns, 2500u);
  gn_vector v{};
  v.hdr.kind = GN_REC_VECTOR_ENTRY;
  v.kind = GN_VEC_RESCHEDULE;
  v.vector = 253;
  ASSERT_EQ(DecodeRecord(Bytes(v), 0, &ev), DecodeResult::kOk);
  EXPECT_EQ(std::get<model::VectorEntry>(ev.payload).kind, model::VectorKind::kReschedule);
}

// A softirq whose exit found its entry unwritten: one record, two events.
TEST(RecordDecoder, ASoftirqSliceIsItsEntryThenItsExit) {
  gn_softirq_slice r{};
  r.hdr.ts = 5000;
  r.hdr.kind = GN_REC_SOFTIRQ_SLICE;
  r.hdr.flags = GN_FLAG_SOFTIRQ;
  r.hdr.tid = 42;
  r.entry_ts = 4000;
  r.vec = GN_SOFTIRQ_NET_RX;
  r.raise_wait_ns = 300;
  std::array<model::Event, 2> out;
  DecodeResult result = DecodeResult::kUnknownKind;
  ASSERT_EQ(DecodeRecordEvents(Bytes(r), 1, out, &result), 2u);
  EXPECT_EQ(result, DecodeResult::kOk);
  EXPECT_EQ(out[0].ts, 4000u);
  EXPECT_EQ(out[0].cpu, 1u);
  EXPECT_EQ(out[0].tid, 42);
  EXPECT_EQ(out[0].common_flags, GN_FLAG_SOFTIRQ);
  EXPECT_EQ(std::get<model::SoftirqEntry>(out[0].payload).vec, 3u);
  EXPECT_EQ(std::get<model::SoftirqEntry>(out[0].payload).raise_wait_ns, 300u);
  EXPECT_EQ(out[1].ts, 5000u);
  EXPECT_EQ(out[1].tid, 42);
  EXPECT_EQ(std::get<model::SoftirqExit>(out[1].payload).vec, 3u);
  EXPECT_EQ(EventsInRingRecord(Bytes(r)), 2u);
  // Alone, DecodeRecord would give half of it: it refuses.
  model::Event ev;
  EXPECT_EQ(DecodeRecord(Bytes(r), 1, &ev), DecodeResult::kUnknownKind);
}

// entry_ts 0: a record nested in the softirq wrote its entry out first.
TEST(RecordDecoder, ASoftirqSliceWithoutItsEntryIsItsExitAlone) {
  gn_softirq_slice r{};
  r.hdr.ts = 5000;
  r.hdr.kind = GN_REC_SOFTIRQ_SLICE;
  r.vec = GN_SOFTIRQ_TIMER;
  std::array<model::Event, 2> out;
  DecodeResult result;
  ASSERT_EQ(DecodeRecordEvents(Bytes(r), 0, out, &result), 1u);
  EXPECT_EQ(out[0].ts, 5000u);
  EXPECT_EQ(std::get<model::SoftirqExit>(out[0].payload).vec, 1u);
  EXPECT_EQ(EventsInRingRecord(Bytes(r)), 1u);
  EXPECT_EQ(DecodeRecordEvents(Bytes(r).first(20), 0, out, &result), 0u);
  EXPECT_EQ(result, DecodeResult::kTooShort);
}

TEST(RecordDecoder, ATimedNetRxEntryCarriesTheUntimedSoftirqsBeforeIt) {
  // Alone, and folded with its exit into a slice.
  gn_softirq entry{};
  entry.hdr.ts = 900;
  entry.hdr.kind = GN_REC_SOFTIRQ_ENTRY;
  entry.vec = GN_SOFTIRQ_NET_RX;
  entry.untimed_before = 15;
  entry.raise_wait_ns = 40;
  model::Event ev;
  ASSERT_EQ(DecodeRecord(Bytes(entry), 0, &ev), DecodeResult::kOk);
  const auto& e = std::get<model::SoftirqEntry>(ev.payload);
  EXPECT_EQ(e.vec, 3u);
  EXPECT_EQ(e.untimed_before, 15u);
  EXPECT_EQ(e.raise_wait_ns, 40u);

  gn_softirq_slice slice{};
  slice.hdr.ts = 1000;
  slice.hdr.kind = GN_REC_SOFTIRQ_SLICE;
  slice.entry_ts = 990;
  slice.vec = GN_SOFTIRQ_NET_RX;
  slice.untimed_before = 65535;  // saturated by the kernel side
  std::array<model::Event, 2> out;
  DecodeResult result;
  ASSERT_EQ(DecodeRecordEvents(Bytes(slice), 0, out, &result), 2u);
  EXPECT_EQ(std::get<model::SoftirqEntry>(out[0].payload).untimed_before, 65535u);
  EXPECT_EQ(std::get<model::SoftirqExit>(out[1].payload).vec, 3u);
}

TEST(RecordDecoder, AnyOtherRecordIsOneEventThroughDecodeRecordEvents) {
  gn_softirq r{};
  r.hdr.ts = 77;
  r.hdr.kind = GN_REC_SOFTIRQ_EXIT;
  r.vec = GN_SOFTIRQ_NET_TX;
  std::array<model::Event, 2> out;
  DecodeResult result;
  ASSERT_EQ(DecodeRecordEvents(Bytes(r), 0, out, &result), 1u);
  EXPECT_EQ(std::get<model::SoftirqExit>(out[0].payload).vec, 2u);
  r.hdr.kind = 200;
  EXPECT_EQ(DecodeRecordEvents(Bytes(r), 0, out, &result), 0u);
  EXPECT_EQ(result, DecodeResult::kUnknownKind);
}

TEST(RecordDecoder, RejectsTruncatedAndUnknownRecords) {
  gn_sched_switch r{};
  r.hdr.kind = GN_REC_SCHED_SWITCH;
  model::Event ev;
  auto bytes = Bytes(r);
  EXPECT_EQ(DecodeRecord(bytes.first(20), 0, &ev), DecodeResult::kTooShort);
  EXPECT_EQ(DecodeRecord(bytes.first(8), 0, &ev), DecodeResult::kTooShort);
  r.hdr.kind = 250;
  EXPECT_EQ(DecodeRecord(Bytes(r), 0, &ev), DecodeResult::kUnknownKind);
}

TEST(RecordDecoder, KindsMapToTheirCollector) {
  EXPECT_EQ(CollectorOfKind(GN_REC_SCHED_SWITCH), "sched");
  EXPECT_EQ(CollectorOfKind(GN_REC_TASK_RENAME), "sched");
  EXPECT_EQ(CollectorOfKind(GN_REC_SOFTIRQ_ENTRY), "irq");
  EXPECT_EQ(CollectorOfKind(GN_REC_VECTOR_EXIT), "irq");
  EXPECT_EQ(CollectorOfKind(GN_REC_SOFTIRQ_SLICE), "irq");
  EXPECT_EQ(CollectorOfKind(0), "");
}

TEST(RingRecordEvents, ABatchCountsTheRecordsItHoldsAnEmptyFlushAndAnyOtherRecordOne) {
  std::vector<uint8_t> batch(sizeof(gn_batch_hdr) + 3 * sizeof(gn_sched_switch));
  gn_batch_hdr hdr{};
  hdr.hdr.kind = GN_REC_BATCH;
  hdr.count = 3;
  hdr.slot = sizeof(gn_sched_switch);
  std::memcpy(batch.data(), &hdr, sizeof(hdr));
  EXPECT_EQ(EventsInRingRecord(batch), 3u);
  hdr.count = 0;  // the flush of an empty batch
  std::memcpy(batch.data(), &hdr, sizeof(hdr));
  EXPECT_EQ(EventsInRingRecord(std::span<const uint8_t>(batch.data(), sizeof(hdr))), 1u);
  gn_sched_switch one{};
  one.hdr.kind = GN_REC_SCHED_SWITCH;
  EXPECT_EQ(EventsInRingRecord(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&one), sizeof(one))), 1u);
  // A batch header cut short is one record, not a count read past its end.
  EXPECT_EQ(EventsInRingRecord(std::span<const uint8_t>(batch.data(), sizeof(gn_header))), 1u);
}

}  // namespace
}  // namespace gpunoise::collect
