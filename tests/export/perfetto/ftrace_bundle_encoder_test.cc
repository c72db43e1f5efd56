#include "export/perfetto/ftrace_bundle_encoder.h"

#include <gtest/gtest.h>

#include <map>

#include "export/perfetto/event_at.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {
namespace {

class FakeIrqNames : public IrqNameSource {
 public:
  std::string_view IrqName(int32_t irq) override {
    return irq == 38 ? std::string_view("virtio2-input.0") : std::string_view("irq?");
  }
};

model::Event At(uint64_t ts, model::Payload p, int32_t tid = 1) {
  return gpunoise::testing::EventAt(ts, std::move(p), 1, tid);
}

TEST(FtraceBundleEncoder, RoundTripsEveryKernelEventKind) {
  std::vector<model::Event> events;
  model::SchedSwitch sw;
  sw.prev_tid = 1;
  sw.next_tid = 42;
  sw.next_prio = 120;
  sw.prev_state = 1;
  sw.next_comm = model::TaskComm("trainer");
  events.push_back(At(100, sw));
  model::SchedWaking wk;
  wk.tid = 43;
  wk.prio = 120;
  wk.target_cpu = 1;
  wk.comm = model::TaskComm("loader");
  events.push_back(At(110, wk));
  model::SchedWaking wn = wk;
  wn.is_new_task = true;
  events.push_back(At(115, wn));
  model::ProcessFork fork;
  fork.parent_tid = 42;
  fork.child_tid = 44;
  fork.is_thread = true;
  fork.child_comm = model::TaskComm("trainer");
  events.push_back(At(120, fork, 42));
  model::TaskRename rn;
  rn.tid = 44;
  rn.old_comm = model::TaskComm("trainer");
  rn.new_comm = model::TaskComm("dataloader0");
  events.push_back(At(125, rn, 44));
  events.push_back(At(130, model::IrqEntry{38}));
  events.push_back(At(131, model::IrqExit{38, 1}));
  events.push_back(At(132, model::SoftirqRaise{3}));
  events.push_back(At(133, model::SoftirqEntry{3}));
  events.push_back(At(140, model::SoftirqExit{3}));
  events.push_back(At(150, model::VectorEntry{model::VectorKind::kLocalTimer, 236}));
  events.push_back(At(151, model::VectorExit{model::VectorKind::kLocalTimer, 236}));
  events.push_back(At(152, model::VectorEntry{model::VectorKind::kReschedule, 253}));

  FtraceBundleEncoder encoder;
  FakeIrqNames names;
  TracePacket packet;
  FtraceBundleEncoder::BundleInfo info;
  info.cpu = 1;
  info.lost_events = true;
  info.previous_bundle_end_timestamp = 90;
  encoder.Encode(info, events, names, &packet);

  // Encode, decode with libprotobuf, compare.
  std::string bytes = packet.SerializeAsString();
  TracePacket decoded;
  ASSERT_TRUE(decoded.ParseFromString(bytes));
  const auto& b = decoded.ftrace_events();
  EXPECT_EQ(b.cpu(), 1u);
  EXPECT_TRUE(b.lost_events());
  EXPECT_EQ(b.previous_bundle_end_timestamp(), 90u);
  EXPECT_FALSE(b.has_last_read_event_timestamp());

  const auto& cs = b.compact_sched();
  ASSERT_EQ(cs.switch_timestamp_size(), 1);
  EXPECT_EQ(cs.switch_next_pid(0), 42);
  EXPECT_EQ(cs.intern_table(cs.switch_next_comm_index(0)), "trainer");
  ASSERT_EQ(cs.waking_pid_size(), 1);
  EXPECT_EQ(cs.waking_pid(0), 43);
  EXPECT_EQ(cs.waking_timestamp(0), 110u);

  std::map<int, const FtraceEvent*> by_kind;
  for (const auto& e : b.event()) by_kind[e.event_case()] = &e;
  // 11 non-compact events minus the reschedule vector (a track event).
  EXPECT_EQ(b.event_size(), 10);
  ASSERT_TRUE(by_kind.count(FtraceEvent::kSchedWakeupNew));
  EXPECT_EQ(by_kind[FtraceEvent::kSchedWakeupNew]->sched_wakeup_new().pid(), 43);
  ASSERT_TRUE(by_kind.count(FtraceEvent::kTaskNewtask));
  const auto* nt = by_kind[FtraceEvent::kTaskNewtask];
  EXPECT_EQ(nt->pid(), 42u) << "task_newtask is emitted by the parent";
  EXPECT_EQ(nt->task_newtask().pid(), 44);
  EXPECT_EQ(nt->task_newtask().clone_flags(), 0x10000u);
  EXPECT_EQ(by_kind[FtraceEvent::kTaskRename]->task_rename().newcomm(), "dataloader0");
  EXPECT_EQ(by_kind[FtraceEvent::kIrqHandlerEntry]->irq_handler_entry().name(), "virtio2-input.0");
  EXPECT_EQ(by_kind[FtraceEvent::kIrqHandlerExit]->irq_handler_exit().ret(), 1);
  EXPECT_EQ(by_kind[FtraceEvent::kSoftirqEntry]->softirq_entry().vec(), 3u);
  EXPECT_EQ(by_kind[FtraceEvent::kSoftirqRaise]->timestamp(), 132u);
  EXPECT_EQ(by_kind[FtraceEvent::kLocalTimerEntry]->local_timer_entry().vector(), 236);
  EXPECT_FALSE(by_kind.count(FtraceEvent::kSchedSwitch)) << "switches go compact";
}

TEST(FtraceBundleEncoder, AnEntryThatWaitedForItsRaiseIsPrecededByTheRaiseAtTheRaisesTime) {
  std::vector<model::Event> events;
  events.push_back(At(1000, model::SoftirqEntry{3, 40}));
  events.push_back(At(1100, model::SoftirqExit{3}));
  events.push_back(At(1200, model::SoftirqEntry{1, 0}));  // no raise seen while recording
  FtraceBundleEncoder encoder;
  FakeIrqNames names;
  TracePacket packet;
  FtraceBundleEncoder::BundleInfo info;
  info.cpu = 0;
  encoder.Encode(info, events, names, &packet);
  TracePacket decoded;
  ASSERT_TRUE(decoded.ParseFromString(packet.SerializeAsString()));
  const auto& b = decoded.ftrace_events();
  ASSERT_EQ(b.event_size(), 4);
  ASSERT_TRUE(b.event(0).has_softirq_raise());
  EXPECT_EQ(b.event(0).timestamp(), 960u);
  EXPECT_EQ(b.event(0).softirq_raise().vec(), 3u);
  ASSERT_TRUE(b.event(1).has_softirq_entry());
  EXPECT_EQ(b.event(1).timestamp(), 1000u);
  EXPECT_TRUE(b.event(2).has_softirq_exit());
  ASSERT_TRUE(b.event(3).has_softirq_entry());
  EXPECT_EQ(b.event(3).softirq_entry().vec(), 1u);
}

TEST(FtraceBundleEncoder, SystemVectorsOtherThanTheTimerHaveNoFtraceForm) {
  EXPECT_TRUE(HasFtraceForm(At(1, model::VectorEntry{model::VectorKind::kLocalTimer, 0})));
  EXPECT_FALSE(HasFtraceForm(At(1, model::VectorEntry{model::VectorKind::kCallFunction, 0})));
  EXPECT_TRUE(HasFtraceForm(At(1, model::SoftirqEntry{1})));
}

}  // namespace
}  // namespace gpunoise::perfetto
