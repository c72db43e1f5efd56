// The hand-rolled reader's field numbers (import/perfetto_fields.h) must be
// upstream Perfetto's. Where the project's subset proto declares the field,
// its descriptor is the reference (tests/export/perfetto/field_numbers_test.cc
// pins the subset to upstream); the few fields the subset does not declare
// are pinned here to the numbers read off upstream's perfetto_trace.proto.
#include "import/perfetto_fields.h"

#include <gtest/gtest.h>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::import {
namespace {

namespace f = fields;
using google::protobuf::Descriptor;

int Number(const Descriptor* d, const char* field) {
  const auto* fd = d->FindFieldByName(field);
  return fd ? fd->number() : -1;
}

TEST(PerfettoFields, MatchTheSubsetProto) {
  using namespace gpunoise::perfetto;
  const Descriptor* packet = TracePacket::descriptor();
  EXPECT_EQ(Number(Trace::descriptor(), "packet"), static_cast<int>(f::trace::kPacket));
  EXPECT_EQ(Number(packet, "ftrace_events"), static_cast<int>(f::packet::kFtraceEvents));
  EXPECT_EQ(Number(packet, "process_tree"), static_cast<int>(f::packet::kProcessTree));
  EXPECT_EQ(Number(packet, "clock_snapshot"), static_cast<int>(f::packet::kClockSnapshot));
  EXPECT_EQ(Number(packet, "timestamp"), static_cast<int>(f::packet::kTimestamp));
  EXPECT_EQ(Number(packet, "trusted_packet_sequence_id"), static_cast<int>(f::packet::kTrustedPacketSequenceId));
  EXPECT_EQ(Number(packet, "track_event"), static_cast<int>(f::packet::kTrackEvent));
  EXPECT_EQ(Number(packet, "interned_data"), static_cast<int>(f::packet::kInternedData));
  EXPECT_EQ(Number(packet, "sequence_flags"), static_cast<int>(f::packet::kSequenceFlags));
  EXPECT_EQ(Number(packet, "ftrace_stats"), static_cast<int>(f::packet::kFtraceStats));
  EXPECT_EQ(Number(packet, "incremental_state_cleared"), static_cast<int>(f::packet::kIncrementalStateCleared));
  EXPECT_EQ(Number(packet, "system_info"), static_cast<int>(f::packet::kSystemInfo));
  EXPECT_EQ(Number(packet, "timestamp_clock_id"), static_cast<int>(f::packet::kTimestampClockId));
  EXPECT_EQ(Number(packet, "track_descriptor"), static_cast<int>(f::packet::kTrackDescriptor));
  EXPECT_EQ(Number(packet, "interrupt_info"), static_cast<int>(f::packet::kInterruptInfo));
  EXPECT_EQ(Number(packet, "compressed_packets"), static_cast<int>(f::packet::kCompressedPackets));
  EXPECT_EQ(TracePacket::SEQ_INCREMENTAL_STATE_CLEARED, static_cast<int>(f::packet::kSeqIncrementalStateCleared));

  const Descriptor* bundle = FtraceEventBundle::descriptor();
  EXPECT_EQ(Number(bundle, "cpu"), static_cast<int>(f::bundle::kCpu));
  EXPECT_EQ(Number(bundle, "event"), static_cast<int>(f::bundle::kEvent));
  EXPECT_EQ(Number(bundle, "lost_events"), static_cast<int>(f::bundle::kLostEvents));
  EXPECT_EQ(Number(bundle, "compact_sched"), static_cast<int>(f::bundle::kCompactSched));
  EXPECT_EQ(Number(bundle, "previous_bundle_end_timestamp"), static_cast<int>(f::bundle::kPreviousBundleEndTimestamp));

  const Descriptor* cs = FtraceEventBundle_CompactSched::descriptor();
  EXPECT_EQ(Number(cs, "switch_timestamp"), static_cast<int>(f::compact::kSwitchTimestamp));
  EXPECT_EQ(Number(cs, "switch_prev_state"), static_cast<int>(f::compact::kSwitchPrevState));
  EXPECT_EQ(Number(cs, "switch_next_pid"), static_cast<int>(f::compact::kSwitchNextPid));
  EXPECT_EQ(Number(cs, "switch_next_prio"), static_cast<int>(f::compact::kSwitchNextPrio));
  EXPECT_EQ(Number(cs, "intern_table"), static_cast<int>(f::compact::kInternTable));
  EXPECT_EQ(Number(cs, "switch_next_comm_index"), static_cast<int>(f::compact::kSwitchNextCommIndex));
  EXPECT_EQ(Number(cs, "waking_timestamp"), static_cast<int>(f::compact::kWakingTimestamp));
  EXPECT_EQ(Number(cs, "waking_pid"), static_cast<int>(f::compact::kWakingPid));
  EXPECT_EQ(Number(cs, "waking_target_cpu"), static_cast<int>(f::compact::kWakingTargetCpu));
  EXPECT_EQ(Number(cs, "waking_prio"), static_cast<int>(f::compact::kWakingPrio));
  EXPECT_EQ(Number(cs, "waking_comm_index"), static_cast<int>(f::compact::kWakingCommIndex));

  const Descriptor* ev = FtraceEvent::descriptor();
  struct {
    const char* name;
    uint32_t number;
  } events[] = {
      {"timestamp", f::ftrace_event::kTimestamp},
      {"pid", f::ftrace_event::kPid},
      {"sched_switch", f::ftrace_event::kSchedSwitch},
      {"sched_waking", f::ftrace_event::kSchedWaking},
      {"ipi_entry", f::ftrace_event::kIpiEntry},
      {"ipi_exit", f::ftrace_event::kIpiExit},
      {"softirq_entry", f::ftrace_event::kSoftirqEntry},
      {"softirq_exit", f::ftrace_event::kSoftirqExit},
      {"softirq_raise", f::ftrace_event::kSoftirqRaise},
      {"irq_handler_entry", f::ftrace_event::kIrqHandlerEntry},
      {"irq_handler_exit", f::ftrace_event::kIrqHandlerExit},
      {"sched_wakeup_new", f::ftrace_event::kSchedWakeupNew},
      {"task_newtask", f::ftrace_event::kTaskNewtask},
      {"task_rename", f::ftrace_event::kTaskRename},
      {"sched_process_exec", f::ftrace_event::kSchedProcessExec},
      {"sched_process_exit", f::ftrace_event::kSchedProcessExit},
      {"sched_process_fork", f::ftrace_event::kSchedProcessFork},
      {"generic", f::ftrace_event::kGeneric},
      {"netif_receive_skb", f::ftrace_event::kNetifReceiveSkb},
      {"net_dev_xmit", f::ftrace_event::kNetDevXmit},
      {"tcp_retransmit_skb", f::ftrace_event::kTcpRetransmitSkb},
      {"napi_gro_receive_entry", f::ftrace_event::kNapiGroReceiveEntry},
      {"kfree_skb", f::ftrace_event::kKfreeSkb},
      {"sched_migrate_task", f::ftrace_event::kSchedMigrateTask},
      {"local_timer_entry", f::ftrace_event::kLocalTimerEntry},
      {"local_timer_exit", f::ftrace_event::kLocalTimerExit},
  };
  for (const auto& e : events) EXPECT_EQ(Number(ev, e.name), static_cast<int>(e.number)) << e.name;

  const Descriptor* ss = SchedSwitchFtraceEvent::descriptor();
  EXPECT_EQ(Number(ss, "prev_comm"), static_cast<int>(f::sched_switch::kPrevComm));
  EXPECT_EQ(Number(ss, "prev_pid"), static_cast<int>(f::sched_switch::kPrevPid));
  EXPECT_EQ(Number(ss, "prev_prio"), static_cast<int>(f::sched_switch::kPrevPrio));
  EXPECT_EQ(Number(ss, "prev_state"), static_cast<int>(f::sched_switch::kPrevState));
  EXPECT_EQ(Number(ss, "next_comm"), static_cast<int>(f::sched_switch::kNextComm));
  EXPECT_EQ(Number(ss, "next_pid"), static_cast<int>(f::sched_switch::kNextPid));
  EXPECT_EQ(Number(ss, "next_prio"), static_cast<int>(f::sched_switch::kNextPrio));
  for (const Descriptor* d : {SchedWakingFtraceEvent::descriptor(), SchedWakeupNewFtraceEvent::descriptor()}) {
    EXPECT_EQ(Number(d, "comm"), static_cast<int>(f::sched_wake::kComm));
    EXPECT_EQ(Number(d, "pid"), static_cast<int>(f::sched_wake::kPid));
    EXPECT_EQ(Number(d, "prio"), static_cast<int>(f::sched_wake::kPrio));
    EXPECT_EQ(Number(d, "target_cpu"), static_cast<int>(f::sched_wake::kTargetCpu));
  }
  const Descriptor* mg = SchedMigrateTaskFtraceEvent::descriptor();
  EXPECT_EQ(Number(mg, "pid"), static_cast<int>(f::sched_migrate::kPid));
  EXPECT_EQ(Number(mg, "orig_cpu"), static_cast<int>(f::sched_migrate::kOrigCpu));
  EXPECT_EQ(Number(mg, "dest_cpu"), static_cast<int>(f::sched_migrate::kDestCpu));
  EXPECT_EQ(Number(TaskNewtaskFtraceEvent::descriptor(), "clone_flags"), static_cast<int>(f::task_newtask::kCloneFlags));
  EXPECT_EQ(Number(TaskNewtaskFtraceEvent::descriptor(), "comm"), static_cast<int>(f::task_newtask::kComm));
  EXPECT_EQ(Number(TaskRenameFtraceEvent::descriptor(), "newcomm"), static_cast<int>(f::task_rename::kNewcomm));
  EXPECT_EQ(Number(SchedProcessExitFtraceEvent::descriptor(), "tgid"), static_cast<int>(f::process_exit::kTgid));
  EXPECT_EQ(Number(SchedProcessExecFtraceEvent::descriptor(), "filename"), static_cast<int>(f::process_exec::kFilename));
  EXPECT_EQ(Number(SchedProcessForkFtraceEvent::descriptor(), "child_pid"), static_cast<int>(f::process_fork::kChildPid));
  EXPECT_EQ(Number(IrqHandlerEntryFtraceEvent::descriptor(), "name"), static_cast<int>(f::irq_entry::kName));
  EXPECT_EQ(Number(IrqHandlerExitFtraceEvent::descriptor(), "ret"), static_cast<int>(f::irq_exit::kRet));
  EXPECT_EQ(Number(SoftirqEntryFtraceEvent::descriptor(), "vec"), static_cast<int>(f::softirq::kVec));
  EXPECT_EQ(Number(LocalTimerEntryFtraceEvent::descriptor(), "vector"), static_cast<int>(f::local_timer::kVector));
  EXPECT_EQ(Number(IpiEntryFtraceEvent::descriptor(), "reason"), static_cast<int>(f::ipi::kReason));
  EXPECT_EQ(Number(NetifReceiveSkbFtraceEvent::descriptor(), "name"), static_cast<int>(f::netif_receive_skb::kName));
  EXPECT_EQ(Number(NetDevXmitFtraceEvent::descriptor(), "rc"), static_cast<int>(f::net_dev_xmit::kRc));
  EXPECT_EQ(Number(NapiGroReceiveEntryFtraceEvent::descriptor(), "queue_mapping"),
            static_cast<int>(f::napi_gro_receive_entry::kQueueMapping));
  EXPECT_EQ(Number(NapiGroReceiveEntryFtraceEvent::descriptor(), "name"), static_cast<int>(f::napi_gro_receive_entry::kName));
  EXPECT_EQ(Number(KfreeSkbFtraceEvent::descriptor(), "location"), static_cast<int>(f::kfree_skb::kLocation));
  EXPECT_EQ(Number(GenericFtraceEvent::descriptor(), "event_name"), static_cast<int>(f::generic::kEventName));
  EXPECT_EQ(Number(GenericFtraceEvent_Field::descriptor(), "str_value"), static_cast<int>(f::generic::kFieldStrValue));
  EXPECT_EQ(Number(GenericFtraceEvent_Field::descriptor(), "int_value"), static_cast<int>(f::generic::kFieldIntValue));
  EXPECT_EQ(Number(GenericFtraceEvent_Field::descriptor(), "uint_value"), static_cast<int>(f::generic::kFieldUintValue));

  EXPECT_EQ(Number(ProcessTree::descriptor(), "threads"), static_cast<int>(f::process_tree::kThreads));
  EXPECT_EQ(Number(ProcessTree_Process::descriptor(), "cmdline"), static_cast<int>(f::process_tree::kProcessCmdline));
  EXPECT_EQ(Number(ProcessTree_Process::descriptor(), "is_kthread"), static_cast<int>(f::process_tree::kProcessIsKthread));
  EXPECT_EQ(Number(ProcessTree_Thread::descriptor(), "tgid"), static_cast<int>(f::process_tree::kThreadTgid));
  EXPECT_EQ(Number(InterruptInfo_InterruptMapping::descriptor(), "irq_id"), static_cast<int>(f::interrupt_info::kIrqId));
  EXPECT_EQ(Number(SystemInfo::descriptor(), "num_cpus"), static_cast<int>(f::system_info::kNumCpus));
  EXPECT_EQ(Number(SystemInfo::descriptor(), "machine_name"), static_cast<int>(f::system_info::kMachineName));
  EXPECT_EQ(Number(Utsname::descriptor(), "release"), static_cast<int>(f::system_info::kUtsRelease));
  EXPECT_EQ(Number(packet, "trace_stats"), static_cast<int>(f::packet::kTraceStats));
  EXPECT_EQ(Number(packet, "previous_packet_dropped"), static_cast<int>(f::packet::kPreviousPacketDropped));
  const Descriptor* fs = FtraceStats::descriptor();
  EXPECT_EQ(Number(fs, "phase"), static_cast<int>(f::ftrace_stats::kPhase));
  EXPECT_EQ(Number(fs, "cpu_stats"), static_cast<int>(f::ftrace_stats::kCpuStats));
  EXPECT_EQ(Number(fs, "atrace_errors"), static_cast<int>(f::ftrace_stats::kAtraceErrors));
  EXPECT_EQ(Number(fs, "unknown_ftrace_events"), static_cast<int>(f::ftrace_stats::kUnknownFtraceEvents));
  EXPECT_EQ(Number(fs, "failed_ftrace_events"), static_cast<int>(f::ftrace_stats::kFailedFtraceEvents));
  EXPECT_EQ(Number(fs, "preserve_ftrace_buffer"), static_cast<int>(f::ftrace_stats::kPreserveFtraceBuffer));
  EXPECT_EQ(Number(fs, "ftrace_parse_errors"), static_cast<int>(f::ftrace_stats::kFtraceParseErrors));
  EXPECT_EQ(Number(fs, "kprobe_stats"), static_cast<int>(f::ftrace_stats::kKprobeStats));
  EXPECT_EQ(Number(fs, "exclusive_feature_error"), static_cast<int>(f::ftrace_stats::kExclusiveFeatureError));
  const Descriptor* cpu_stats = FtraceCpuStats::descriptor();
  EXPECT_EQ(Number(cpu_stats, "cpu"), static_cast<int>(f::ftrace_stats::kCpu));
  EXPECT_EQ(Number(cpu_stats, "entries"), static_cast<int>(f::ftrace_stats::kEntries));
  EXPECT_EQ(Number(cpu_stats, "overrun"), static_cast<int>(f::ftrace_stats::kOverrun));
  EXPECT_EQ(Number(cpu_stats, "commit_overrun"), static_cast<int>(f::ftrace_stats::kCommitOverrun));
  EXPECT_EQ(Number(cpu_stats, "bytes_read"), static_cast<int>(f::ftrace_stats::kBytesRead));
  EXPECT_EQ(Number(cpu_stats, "oldest_event_ts"), static_cast<int>(f::ftrace_stats::kOldestEventTs));
  EXPECT_EQ(Number(cpu_stats, "now_ts"), static_cast<int>(f::ftrace_stats::kNowTs));
  EXPECT_EQ(Number(cpu_stats, "dropped_events"), static_cast<int>(f::ftrace_stats::kDroppedEvents));
  EXPECT_EQ(Number(cpu_stats, "read_events"), static_cast<int>(f::ftrace_stats::kReadEvents));
  EXPECT_EQ(Number(FtraceKprobeStats::descriptor(), "hits"), static_cast<int>(f::ftrace_stats::kKprobeHits));
  EXPECT_EQ(Number(FtraceKprobeStats::descriptor(), "misses"), static_cast<int>(f::ftrace_stats::kKprobeMisses));
  EXPECT_EQ(FtraceStats::START_OF_TRACE, static_cast<int>(f::ftrace_stats::kPhaseStart));
  EXPECT_EQ(FtraceStats::END_OF_TRACE, static_cast<int>(f::ftrace_stats::kPhaseEnd));
  const Descriptor* ts = TraceStats::descriptor();
  EXPECT_EQ(Number(ts, "buffer_stats"), static_cast<int>(f::trace_stats::kBufferStats));
  EXPECT_EQ(Number(ts, "chunks_discarded"), static_cast<int>(f::trace_stats::kChunksDiscarded));
  EXPECT_EQ(Number(ts, "patches_discarded"), static_cast<int>(f::trace_stats::kPatchesDiscarded));
  EXPECT_EQ(Number(ts, "invalid_packets"), static_cast<int>(f::trace_stats::kInvalidPackets));
  EXPECT_EQ(Number(ts, "filter_stats"), static_cast<int>(f::trace_stats::kFilterStats));
  EXPECT_EQ(Number(ts, "flushes_requested"), static_cast<int>(f::trace_stats::kFlushesRequested));
  EXPECT_EQ(Number(ts, "flushes_succeeded"), static_cast<int>(f::trace_stats::kFlushesSucceeded));
  EXPECT_EQ(Number(ts, "flushes_failed"), static_cast<int>(f::trace_stats::kFlushesFailed));
  EXPECT_EQ(Number(ts, "final_flush_outcome"), static_cast<int>(f::trace_stats::kFinalFlushOutcome));
  EXPECT_EQ(TraceStats::FINAL_FLUSH_FAILED, static_cast<int>(f::trace_stats::kFinalFlushFailed));
  EXPECT_EQ(Number(TraceStats_FilterStats::descriptor(), "errors"), static_cast<int>(f::trace_stats::kFilterErrors));
  const Descriptor* bs = TraceStats_BufferStats::descriptor();
  EXPECT_EQ(Number(bs, "bytes_written"), static_cast<int>(f::trace_stats::kBufBytesWritten));
  EXPECT_EQ(Number(bs, "chunks_written"), static_cast<int>(f::trace_stats::kBufChunksWritten));
  EXPECT_EQ(Number(bs, "chunks_overwritten"), static_cast<int>(f::trace_stats::kBufChunksOverwritten));
  EXPECT_EQ(Number(bs, "patches_failed"), static_cast<int>(f::trace_stats::kBufPatchesFailed));
  EXPECT_EQ(Number(bs, "readaheads_failed"), static_cast<int>(f::trace_stats::kBufReadaheadsFailed));
  EXPECT_EQ(Number(bs, "abi_violations"), static_cast<int>(f::trace_stats::kBufAbiViolations));
  EXPECT_EQ(Number(bs, "chunks_rewritten"), static_cast<int>(f::trace_stats::kBufChunksRewritten));
  EXPECT_EQ(Number(bs, "buffer_size"), static_cast<int>(f::trace_stats::kBufBufferSize));
  EXPECT_EQ(Number(bs, "bytes_overwritten"), static_cast<int>(f::trace_stats::kBufBytesOverwritten));
  EXPECT_EQ(Number(bs, "chunks_discarded"), static_cast<int>(f::trace_stats::kBufChunksDiscarded));
  EXPECT_EQ(Number(bs, "trace_writer_packet_loss"), static_cast<int>(f::trace_stats::kBufTraceWriterPacketLoss));

  const Descriptor* td = TrackDescriptor::descriptor();
  EXPECT_EQ(Number(td, "uuid"), static_cast<int>(f::track_descriptor::kUuid));
  EXPECT_EQ(Number(td, "name"), static_cast<int>(f::track_descriptor::kName));
  EXPECT_EQ(Number(td, "static_name"), static_cast<int>(f::track_descriptor::kStaticName));
  EXPECT_EQ(Number(td, "parent_uuid"), static_cast<int>(f::track_descriptor::kParentUuid));
  EXPECT_EQ(Number(td, "counter"), static_cast<int>(f::track_descriptor::kCounter));
  EXPECT_EQ(Number(ThreadDescriptor::descriptor(), "tid"), static_cast<int>(f::track_descriptor::kThreadTid));
  EXPECT_EQ(Number(ThreadDescriptor::descriptor(), "thread_name"), static_cast<int>(f::track_descriptor::kThreadName));
  EXPECT_EQ(Number(ProcessDescriptor::descriptor(), "process_name"), static_cast<int>(f::track_descriptor::kProcessName));

  const Descriptor* te = TrackEvent::descriptor();
  EXPECT_EQ(Number(te, "category_iids"), static_cast<int>(f::track_event::kCategoryIids));
  EXPECT_EQ(Number(te, "debug_annotations"), static_cast<int>(f::track_event::kDebugAnnotations));
  EXPECT_EQ(Number(te, "type"), static_cast<int>(f::track_event::kType));
  EXPECT_EQ(Number(te, "name_iid"), static_cast<int>(f::track_event::kNameIid));
  EXPECT_EQ(Number(te, "track_uuid"), static_cast<int>(f::track_event::kTrackUuid));
  EXPECT_EQ(Number(te, "categories"), static_cast<int>(f::track_event::kCategories));
  EXPECT_EQ(Number(te, "name"), static_cast<int>(f::track_event::kName));
  EXPECT_EQ(Number(te, "counter_value"), static_cast<int>(f::track_event::kCounterValue));
  EXPECT_EQ(Number(te, "double_counter_value"), static_cast<int>(f::track_event::kDoubleCounterValue));
  EXPECT_EQ(Number(te, "flow_ids"), static_cast<int>(f::track_event::kFlowIds));
  EXPECT_EQ(Number(te, "terminating_flow_ids"), static_cast<int>(f::track_event::kTerminatingFlowIds));
  EXPECT_EQ(Number(te, "correlation_id"), static_cast<int>(f::track_event::kCorrelationId));
  EXPECT_EQ(TrackEvent::TYPE_SLICE_BEGIN, static_cast<int>(f::track_event::kTypeSliceBegin));
  EXPECT_EQ(TrackEvent::TYPE_COUNTER, static_cast<int>(f::track_event::kTypeCounter));
  const Descriptor* da = DebugAnnotation::descriptor();
  EXPECT_EQ(Number(da, "name"), static_cast<int>(f::debug_annotation::kName));
  EXPECT_EQ(Number(da, "name_iid"), static_cast<int>(f::debug_annotation::kNameIid));
  EXPECT_EQ(Number(da, "string_value"), static_cast<int>(f::debug_annotation::kStringValue));
  EXPECT_EQ(Number(da, "uint_value"), static_cast<int>(f::debug_annotation::kUintValue));
  EXPECT_EQ(Number(da, "double_value"), static_cast<int>(f::debug_annotation::kDoubleValue));
  const Descriptor* id = InternedData::descriptor();
  EXPECT_EQ(Number(id, "event_names"), static_cast<int>(f::interned_data::kEventNames));
  EXPECT_EQ(Number(id, "event_categories"), static_cast<int>(f::interned_data::kEventCategories));
  EXPECT_EQ(Number(id, "debug_annotation_names"), static_cast<int>(f::interned_data::kDebugAnnotationNames));
}

// Read off upstream perfetto_trace.proto; the subset does not declare these.
TEST(PerfettoFields, PinsFieldsTheSubsetLeavesOut) {
  EXPECT_EQ(f::packet::kZstdCompressedPackets, 133u);     // TracePacket.zstd_compressed_packets
  EXPECT_EQ(f::packet::kTracePacketDefaults, 59u);        // TracePacket.trace_packet_defaults
  EXPECT_EQ(f::packet_defaults::kTrackEventDefaults, 11u);  // TracePacketDefaults.track_event_defaults
  EXPECT_EQ(f::track_event_defaults::kTrackUuid, 11u);    // TrackEventDefaults.track_uuid
  EXPECT_EQ(f::bundle::kFtraceClock, 5u);                 // FtraceEventBundle.ftrace_clock
  EXPECT_EQ(f::bundle::kFtraceTimestamp, 6u);             // FtraceEventBundle.ftrace_timestamp
  EXPECT_EQ(f::bundle::kBootTimestamp, 7u);               // FtraceEventBundle.boot_timestamp
  EXPECT_EQ(f::ftrace_event::kSchedWakeup, 17u);          // FtraceEvent.sched_wakeup
  EXPECT_EQ(f::debug_annotation::kStringValueIid, 17u);   // DebugAnnotation.string_value_iid
  EXPECT_EQ(f::debug_annotation::kPointerValue, 7u);      // DebugAnnotation.pointer_value
  EXPECT_EQ(f::interned_data::kDebugAnnotationStringValues, 29u);  // InternedData.debug_annotation_string_values
  EXPECT_EQ(f::interned_data::kInternedStringStr, 2u);    // InternedString.str
}

}  // namespace
}  // namespace gpunoise::import
