#include "import/trace_reader.h"

#include <gtest/gtest.h>

#include "export/perfetto/ftrace_bundle_encoder.h"
#include "import/test_trace.h"
#include "import/trace_reader_test_support.h"

namespace gpunoise::import {
namespace {

using testing::Wire;
using namespace reader_test;

TEST(TraceReader, ReadsGpunoiseBundlesInTimeOrderWithPrevInferredPerCpu) {
  TestTrace trace;
  AddGpunoiseBundle(trace, 0,
                    {Switch(100, 0, 0, 10, 0, "a"), Waking(150, 0, 10, 11, 1),
                     Ev(200, 0, 10, model::IrqEntry{30}), Ev(210, 0, 10, model::IrqExit{30, 1}),
                     Ev(220, 0, 10, model::SoftirqEntry{3}), Ev(260, 0, 10, model::SoftirqExit{3}),
                     Switch(300, 0, 10, 12, 1, "b")});
  AddGpunoiseBundle(trace, 1, {Switch(120, 1, 0, 11, 0, "wakee")});
  AddGpunoiseBundle(trace, 0, {Switch(400, 0, 12, 0, 256, "swapper/0")});
  RecordingSink sink;
  auto stats = ReadBytes(trace.bytes(), sink);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(stats->packets, 3u);
  EXPECT_EQ(stats->events, 9u);
  EXPECT_EQ(stats->first_ts, 100u);
  EXPECT_EQ(stats->last_ts, 400u);

  std::vector<model::Event> cpu0;
  for (const auto& e : sink.events)
    if (e.cpu == 0) cpu0.push_back(e);
  ASSERT_EQ(cpu0.size(), 8u);
  for (size_t i = 1; i < cpu0.size(); ++i) EXPECT_LE(cpu0[i - 1].ts, cpu0[i].ts);
  // Compact sched has no prev_pid: the first switch on a CPU has none, the
  // others take the previous switch's next, across bundles too.
  auto sw = [](const model::Event& e) { return std::get<model::SchedSwitch>(e.payload); };
  EXPECT_EQ(sw(cpu0[0]).prev_tid, -1);
  EXPECT_EQ(sw(cpu0[0]).next_tid, 10);
  EXPECT_EQ(sw(cpu0[0]).next_comm.view(), "a");
  EXPECT_EQ(std::get<model::SchedWaking>(cpu0[1].payload).tid, 11);
  EXPECT_EQ(cpu0[1].tid, 10) << "the waker is the task current on the CPU";
  EXPECT_EQ(std::get<model::IrqEntry>(cpu0[2].payload).irq, 30);
  EXPECT_EQ(std::get<model::SoftirqExit>(cpu0[5].payload).vec, 3u);
  EXPECT_EQ(sw(cpu0[6]).prev_tid, 10);
  EXPECT_EQ(sw(cpu0[6]).prev_state, 1);
  EXPECT_EQ(sw(cpu0[7]).prev_tid, 12);
  EXPECT_EQ(sw(cpu0[7]).prev_state, 256);
  EXPECT_EQ(cpu0[7].tid, 12);
}

TEST(TraceReader, LostEventsForgetTheCurrentTaskAndReportTheGap) {
  TestTrace trace;
  AddGpunoiseBundle(trace, 0, {Switch(100, 0, 0, 10, 0, "a")});
  AddGpunoiseBundle(trace, 0, {Switch(500, 0, 77, 12, 0, "b")}, /*lost=*/true, /*previous_end=*/100);
  RecordingSink sink;
  ASSERT_TRUE(ReadBytes(trace.bytes(), sink).ok());
  ASSERT_EQ(sink.losses.size(), 1u);
  EXPECT_EQ(sink.losses[0].cpu, 0u);
  EXPECT_EQ(sink.losses[0].from, 100u);
  EXPECT_EQ(sink.losses[0].to, 500u);
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(std::get<model::SchedSwitch>(sink.events[1].payload).prev_tid, -1)
      << "after a loss the task that was switched out is unknown";
}

// Perfetto's recorder without compact sched: FtraceEvent.sched_switch in
// full form, with prev_pid, inside ftrace bundles, plus irq and softirq
// events carrying the IRQ's name.
TEST(TraceReader, ReadsPerfettoRecorderFullFormatSchedSwitch) {
  TestTrace trace;
  perfetto::TracePacket packet;
  auto* bundle = packet.mutable_ftrace_events();
  bundle->set_cpu(2);
  auto add = [&](uint64_t ts, uint32_t pid) {
    auto* e = bundle->add_event();
    e->set_timestamp(ts);
    e->set_pid(pid);
    return e;
  };
  auto* s1 = add(1000, 0)->mutable_sched_switch();
  s1->set_prev_comm("swapper/2");
  s1->set_prev_pid(0);
  s1->set_prev_prio(120);
  s1->set_prev_state(0);
  s1->set_next_comm("worker");
  s1->set_next_pid(4242);
  s1->set_next_prio(120);
  auto* irq = add(1100, 4242)->mutable_irq_handler_entry();
  irq->set_irq(45);
  irq->set_name("eth0-rx-3");
  add(1150, 4242)->mutable_irq_handler_exit()->set_irq(45);
  add(1160, 4242)->mutable_softirq_entry()->set_vec(3);
  add(1300, 4242)->mutable_softirq_exit()->set_vec(3);
  auto* w = add(1400, 4242)->mutable_sched_waking();
  w->set_comm("hog");
  w->set_pid(999);
  w->set_prio(120);
  w->set_success(1);
  w->set_target_cpu(2);
  auto* s2 = add(1500, 4242)->mutable_sched_switch();
  s2->set_prev_comm("worker");
  s2->set_prev_pid(4242);
  s2->set_prev_state(256);
  s2->set_next_comm("hog");
  s2->set_next_pid(999);
  // A switch whose prev is not the task the last one put there: the kernel
  // made a switch that never reached the recorder.
  auto* s3 = add(1700, 31)->mutable_sched_switch();
  s3->set_prev_pid(31);
  s3->set_prev_state(1);
  s3->set_next_comm("worker");
  s3->set_next_pid(4242);
  trace.Add(packet);

  RecordingSink sink;
  auto stats = ReadBytes(trace.bytes(), sink);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  ASSERT_EQ(sink.events.size(), 8u);
  const auto& first = std::get<model::SchedSwitch>(sink.events[0].payload);
  EXPECT_EQ(sink.events[0].cpu, 2u);
  EXPECT_EQ(first.prev_tid, 0);
  EXPECT_EQ(first.next_tid, 4242);
  EXPECT_EQ(first.next_comm.view(), "worker");
  EXPECT_EQ(std::get<model::IrqEntry>(sink.events[1].payload).irq, 45);
  EXPECT_EQ(sink.events[1].tid, 4242);
  ASSERT_FALSE(sink.irq_names.empty());
  EXPECT_EQ(sink.irq_names[0], std::make_pair(45, std::string("eth0-rx-3")));
  EXPECT_EQ(std::get<model::SoftirqEntry>(sink.events[3].payload).vec, 3u);
  const auto& waking = std::get<model::SchedWaking>(sink.events[5].payload);
  EXPECT_EQ(waking.tid, 999);
  EXPECT_EQ(waking.target_cpu, 2);
  EXPECT_EQ(waking.comm.view(), "hog");
  const auto& preempt = std::get<model::SchedSwitch>(sink.events[6].payload);
  EXPECT_EQ(preempt.prev_tid, 4242);
  EXPECT_EQ(preempt.prev_state, 256);
  EXPECT_EQ(stats->unseen_switches, 1u);
}

// Perfetto's recorder with compact sched: switches and wakings in columns,
// irq events in full form in the same bundle, merged by time.
TEST(TraceReader, MergesPerfettoCompactSchedWithFullEventsOfTheSameBundle) {
  TestTrace trace;
  perfetto::TracePacket packet;
  auto* bundle = packet.mutable_ftrace_events();
  bundle->set_cpu(0);
  auto* cs = bundle->mutable_compact_sched();
  cs->add_intern_table("worker");
  cs->add_intern_table("swapper/0");
  // Switches at 1000 (-> 7) and 1500 (-> 0), deltas.
  cs->add_switch_timestamp(1000);
  cs->add_switch_timestamp(500);
  cs->add_switch_prev_state(0);
  cs->add_switch_prev_state(1);
  cs->add_switch_next_pid(7);
  cs->add_switch_next_pid(0);
  cs->add_switch_next_prio(120);
  cs->add_switch_next_prio(120);
  cs->add_switch_next_comm_index(0);
  cs->add_switch_next_comm_index(1);
  cs->add_waking_timestamp(1200);
  cs->add_waking_pid(8);
  cs->add_waking_target_cpu(1);
  cs->add_waking_prio(120);
  cs->add_waking_comm_index(0);
  auto* e = bundle->add_event();
  e->set_timestamp(1100);
  e->set_pid(7);
  e->mutable_softirq_entry()->set_vec(1);
  trace.Add(packet);

  RecordingSink sink;
  ASSERT_TRUE(ReadBytes(trace.bytes(), sink).ok());
  ASSERT_EQ(sink.events.size(), 4u);
  EXPECT_EQ(sink.events[0].ts, 1000u);
  EXPECT_EQ(sink.events[1].ts, 1100u);
  EXPECT_TRUE(std::holds_alternative<model::SoftirqEntry>(sink.events[1].payload));
  EXPECT_EQ(sink.events[2].ts, 1200u);
  EXPECT_EQ(std::get<model::SchedWaking>(sink.events[2].payload).target_cpu, 1);
  EXPECT_EQ(sink.events[2].tid, 7);
  EXPECT_EQ(sink.events[3].ts, 1500u);
  const auto& s = std::get<model::SchedSwitch>(sink.events[3].payload);
  EXPECT_EQ(s.prev_tid, 7);
  EXPECT_EQ(s.prev_state, 1);
  EXPECT_EQ(s.next_comm.view(), "swapper/0");
}

TEST(TraceReader, MovesEventsOfANonBootFtraceClockOntoBoottime) {
  // FtraceEventBundle: cpu 0, ftrace_clock GLOBAL (5), ftrace_timestamp (6),
  // boot_timestamp (7): boot = ftrace + 4000.
  std::string event = Wire().Varint(1, 500).Varint(2, 1).Bytes(24, Wire().Varint(1, 3).str()).str();
  std::string bundle = Wire().Varint(1, 0).Bytes(2, event).Varint(5, 2).Varint(6, 1000).Varint(7, 5000).str();
  TestTrace trace;
  trace.AddSerialized(Wire().Bytes(1, bundle).str());
  RecordingSink sink;
  ASSERT_TRUE(ReadBytes(trace.bytes(), sink).ok());
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].ts, 4500u);
}

TEST(TraceReader, SkipsPacketsAndFieldsItDoesNotUse) {
  TestTrace trace;
  trace.AddSerialized(Wire().Bytes(999, "future packet kind").Varint(8, 5).str());
  trace.AddRaw(Wire().Varint(2, 7).str());  // not a packet field at all
  AddGpunoiseBundle(trace, 0, {Switch(100, 0, 0, 10, 0, "a")});
  perfetto::TracePacket unknown_event;
  auto* e = unknown_event.mutable_ftrace_events()->add_event();
  e->set_timestamp(50);
  e->mutable_ipi_raise()->set_target_cpus(1);
  trace.Add(unknown_event);
  RecordingSink sink;
  auto stats = ReadBytes(trace.bytes(), sink);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(stats->skipped_packets, 2u);
  EXPECT_EQ(stats->unknown_ftrace_events, 1u);
}

}  // namespace
}  // namespace gpunoise::import
