#include "export/perfetto/compact_sched.h"

#include <gtest/gtest.h>

#include "common/proto_wire.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {
namespace {

model::SchedSwitch Switch(int32_t next, const char* comm, int64_t prev_state = 1) {
  model::SchedSwitch s;
  s.next_tid = next;
  s.next_prio = 120;
  s.prev_state = prev_state;
  s.next_comm = model::TaskComm(comm);
  return s;
}

// The builder writes wire bytes; the generated subset reads them back.
void Flush(CompactSchedBuilder& b, FtraceEventBundle_CompactSched* out) {
  std::string bytes;
  ProtoWriter w(&bytes);
  b.FlushTo(w);
  ASSERT_TRUE(out->ParseFromString(bytes));
}

TEST(CompactSched, NegativeValuesRoundTrip) {
  CompactSchedBuilder b;
  model::SchedWaking w;
  w.tid = 7;
  w.prio = -1;
  w.target_cpu = -1;
  w.comm = model::TaskComm("rt");
  b.AddWaking(1000, w, 0);
  b.AddSwitch(1000, Switch(-2, "x", -1));
  FtraceEventBundle_CompactSched out;
  Flush(b, &out);
  EXPECT_EQ(out.waking_prio(0), -1);
  EXPECT_EQ(out.waking_target_cpu(0), -1);
  EXPECT_EQ(out.switch_next_pid(0), -2);
  EXPECT_EQ(out.switch_prev_state(0), -1);
}

TEST(CompactSched, SwitchTimestampsAreDeltaEncoded) {
  CompactSchedBuilder b;
  b.AddSwitch(1000, Switch(1, "a"));
  b.AddSwitch(1500, Switch(2, "b"));
  b.AddSwitch(1500, Switch(3, "c"));
  FtraceEventBundle_CompactSched out;
  Flush(b, &out);
  ASSERT_EQ(out.switch_timestamp_size(), 3);
  EXPECT_EQ(out.switch_timestamp(0), 1000u);
  EXPECT_EQ(out.switch_timestamp(1), 500u);
  EXPECT_EQ(out.switch_timestamp(2), 0u);
}

TEST(CompactSched, CommsAreInternedOncePerBundle) {
  CompactSchedBuilder b;
  b.AddSwitch(1, Switch(10, "worker"));
  b.AddSwitch(2, Switch(11, "swapper/0"));
  b.AddSwitch(3, Switch(12, "worker"));
  model::SchedWaking w;
  w.tid = 12;
  w.comm = model::TaskComm("worker");
  b.AddWaking(4, w, 0);
  FtraceEventBundle_CompactSched out;
  Flush(b, &out);
  ASSERT_EQ(out.intern_table_size(), 2);
  EXPECT_EQ(out.intern_table(out.switch_next_comm_index(0)), "worker");
  EXPECT_EQ(out.intern_table(out.switch_next_comm_index(1)), "swapper/0");
  EXPECT_EQ(out.switch_next_comm_index(0), out.switch_next_comm_index(2));
  EXPECT_EQ(out.waking_comm_index(0), out.switch_next_comm_index(0));
}

TEST(CompactSched, ColumnsStayAlignedAndBuilderResets) {
  CompactSchedBuilder b;
  for (int i = 0; i < 100; ++i) b.AddSwitch(100 + i, Switch(i, i % 2 ? "odd" : "even", i));
  model::SchedWaking w;
  w.tid = 7;
  w.target_cpu = 1;
  w.prio = 100;
  w.comm = model::TaskComm("waker");
  b.AddWaking(5, w, model::kFlagSoftirq);
  b.AddWaking(9, w, 0);
  FtraceEventBundle_CompactSched out;
  Flush(b, &out);
  EXPECT_EQ(out.switch_prev_state_size(), 100);
  EXPECT_EQ(out.switch_next_pid_size(), 100);
  EXPECT_EQ(out.switch_next_prio_size(), 100);
  EXPECT_EQ(out.switch_next_comm_index_size(), 100);
  EXPECT_EQ(out.switch_prev_state(42), 42);
  EXPECT_EQ(out.waking_timestamp_size(), 2);
  EXPECT_EQ(out.waking_timestamp(1), 4u);
  EXPECT_EQ(out.waking_target_cpu(0), 1);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.interned_comms(), 0u);

  // A second bundle starts from absolute timestamps again.
  b.AddSwitch(5000, Switch(1, "x"));
  FtraceEventBundle_CompactSched second;
  Flush(b, &second);
  EXPECT_EQ(second.switch_timestamp(0), 5000u);
}

TEST(CompactSched, CostsUnderTenBytesPerSwitchEvent) {
  // Realistic shape: ~2 us apart, a handful of comms, prio 120, states S/R+.
  CompactSchedBuilder b;
  const char* comms[] = {"python3", "swapper/1", "pt_main_thread", "kworker/1:1"};
  uint64_t ts = 1'000'000'000'000;
  const int n = 10000;
  for (int i = 0; i < n; ++i) {
    ts += 1500 + (i * 37) % 900;
    b.AddSwitch(ts, Switch(1000 + i % 4, comms[i % 4], i % 3 ? 1 : 0x100));
  }
  FtraceEventBundle_CompactSched out;
  Flush(b, &out);
  double per_event = static_cast<double>(out.ByteSizeLong()) / n;
  EXPECT_LT(per_event, 10.0) << per_event << " bytes per switch";
}

TEST(CompactSched, WakingCommonFlagsCarryTheInterruptContext) {
  CompactSchedBuilder b;
  model::SchedWaking w;
  w.tid = 7;
  w.comm = model::TaskComm("reader");
  b.AddWaking(10, w, model::kFlagSoftirq);
  b.AddWaking(20, w, 0);
  b.AddWaking(30, w, model::kFlagHardirq);
  FtraceEventBundle_CompactSched out;
  Flush(b, &out);
  // One flags entry per waking, in Perfetto's TRACE_FLAG_* bits.
  ASSERT_EQ(out.waking_common_flags_size(), 3);
  EXPECT_EQ(out.waking_common_flags(0), 0x10u);
  EXPECT_EQ(out.waking_common_flags(1), 0u);
  EXPECT_EQ(out.waking_common_flags(2), 0x08u);
}

}  // namespace
}  // namespace gpunoise::perfetto
