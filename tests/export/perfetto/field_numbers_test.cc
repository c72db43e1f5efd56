// Pins every field number of export/perfetto/protos/perfetto_trace_subset.proto
// to the number google/perfetto's protos/perfetto/trace/perfetto_trace.proto
// gives it. The trace processor silently drops a field with a wrong number, so
// a typo here would lose data without any error; this test makes it loud.
// The table was read off the upstream schema; every field the subset declares
// must appear in it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {
namespace {

struct Pin {
  const char* message;  // relative to package gpunoise.perfetto
  const char* field;
  int number;
};

constexpr Pin kUpstreamNumbers[] = {
    {"ClockSnapshot", "clocks", 1},
    {"ClockSnapshot", "primary_trace_clock", 2},
    {"ClockSnapshot.Clock", "clock_id", 1},
    {"ClockSnapshot.Clock", "timestamp", 2},
    {"ClockSnapshot.Clock", "is_incremental", 3},
    {"ClockSnapshot.Clock", "unit_multiplier_ns", 4},
    {"CounterDescriptor", "categories", 2},
    {"CounterDescriptor", "unit", 3},
    {"CounterDescriptor", "unit_multiplier", 4},
    {"CounterDescriptor", "is_incremental", 5},
    {"CounterDescriptor", "unit_name", 6},
    {"CounterDescriptor", "y_axis_share_key", 7},
    {"DebugAnnotation", "name_iid", 1},
    {"DebugAnnotation", "bool_value", 2},
    {"DebugAnnotation", "uint_value", 3},
    {"DebugAnnotation", "int_value", 4},
    {"DebugAnnotation", "double_value", 5},
    {"DebugAnnotation", "string_value", 6},
    {"DebugAnnotation", "pointer_value", 7},
    {"DebugAnnotation", "legacy_json_value", 9},
    {"DebugAnnotation", "name", 10},
    {"DebugAnnotation", "dict_entries", 11},
    {"DebugAnnotation", "array_values", 12},
    {"DebugAnnotationName", "iid", 1},
    {"DebugAnnotationName", "name", 2},
    {"EventCategory", "iid", 1},
    {"EventCategory", "name", 2},
    {"EventName", "iid", 1},
    {"EventName", "name", 2},
    {"FtraceCpuStats", "cpu", 1},
    {"FtraceCpuStats", "entries", 2},
    {"FtraceCpuStats", "overrun", 3},
    {"FtraceCpuStats", "commit_overrun", 4},
    {"FtraceCpuStats", "bytes_read", 5},
    {"FtraceCpuStats", "oldest_event_ts", 6},
    {"FtraceCpuStats", "now_ts", 7},
    {"FtraceCpuStats", "dropped_events", 8},
    {"FtraceCpuStats", "read_events", 9},
    {"FtraceEvent", "timestamp", 1},
    {"FtraceEvent", "pid", 2},
    {"FtraceEvent", "sched_switch", 4},
    {"FtraceEvent", "common_flags", 5},
    {"FtraceEvent", "sched_waking", 20},
    {"FtraceEvent", "ipi_entry", 21},
    {"FtraceEvent", "ipi_exit", 22},
    {"FtraceEvent", "ipi_raise", 23},
    {"FtraceEvent", "softirq_entry", 24},
    {"FtraceEvent", "softirq_exit", 25},
    {"FtraceEvent", "softirq_raise", 26},
    {"FtraceEvent", "irq_handler_entry", 36},
    {"FtraceEvent", "irq_handler_exit", 37},
    {"FtraceEvent", "sched_wakeup_new", 114},
    {"FtraceEvent", "task_newtask", 235},
    {"FtraceEvent", "task_rename", 236},
    {"FtraceEvent", "sched_process_exec", 237},
    {"FtraceEvent", "sched_process_exit", 238},
    {"FtraceEvent", "sched_process_fork", 239},
    {"FtraceEvent", "sched_process_free", 240},
    {"FtraceEvent", "generic", 327},
    {"FtraceEvent", "netif_receive_skb", 360},
    {"FtraceEvent", "net_dev_xmit", 361},
    {"FtraceEvent", "tcp_retransmit_skb", 363},
    {"FtraceEvent", "napi_gro_receive_entry", 365},
    {"FtraceEvent", "napi_gro_receive_exit", 366},
    {"FtraceEvent", "kfree_skb", 367},
    {"FtraceEvent", "sched_migrate_task", 491},
    {"FtraceEvent", "local_timer_entry", 559},
    {"FtraceEvent", "local_timer_exit", 560},
    {"FtraceEventBundle", "cpu", 1},
    {"FtraceEventBundle", "event", 2},
    {"FtraceEventBundle", "lost_events", 3},
    {"FtraceEventBundle", "compact_sched", 4},
    {"FtraceEventBundle", "last_read_event_timestamp", 9},
    {"FtraceEventBundle", "previous_bundle_end_timestamp", 10},
    {"FtraceEventBundle.CompactSched", "switch_timestamp", 1},
    {"FtraceEventBundle.CompactSched", "switch_prev_state", 2},
    {"FtraceEventBundle.CompactSched", "switch_next_pid", 3},
    {"FtraceEventBundle.CompactSched", "switch_next_prio", 4},
    {"FtraceEventBundle.CompactSched", "intern_table", 5},
    {"FtraceEventBundle.CompactSched", "switch_next_comm_index", 6},
    {"FtraceEventBundle.CompactSched", "waking_timestamp", 7},
    {"FtraceEventBundle.CompactSched", "waking_pid", 8},
    {"FtraceEventBundle.CompactSched", "waking_target_cpu", 9},
    {"FtraceEventBundle.CompactSched", "waking_prio", 10},
    {"FtraceEventBundle.CompactSched", "waking_comm_index", 11},
    {"FtraceEventBundle.CompactSched", "waking_common_flags", 12},
    {"FtraceStats", "phase", 1},
    {"FtraceStats", "cpu_stats", 2},
    {"FtraceStats", "atrace_errors", 5},
    {"FtraceStats", "unknown_ftrace_events", 6},
    {"FtraceStats", "failed_ftrace_events", 7},
    {"FtraceStats", "cpu_buffer_size_pages", 11},
    {"GenericFtraceEvent", "event_name", 1},
    {"GenericFtraceEvent", "field", 2},
    {"GenericFtraceEvent.Field", "name", 1},
    {"GenericFtraceEvent.Field", "str_value", 3},
    {"GenericFtraceEvent.Field", "int_value", 4},
    {"GenericFtraceEvent.Field", "uint_value", 5},
    {"InternedData", "event_categories", 1},
    {"InternedData", "event_names", 2},
    {"InternedData", "debug_annotation_names", 3},
    {"InterruptInfo", "irq_mapping", 1},
    {"InterruptInfo.InterruptMapping", "irq_id", 1},
    {"InterruptInfo.InterruptMapping", "name", 2},
    {"IpiEntryFtraceEvent", "reason", 1},
    {"IpiExitFtraceEvent", "reason", 1},
    {"IpiRaiseFtraceEvent", "target_cpus", 1},
    {"IpiRaiseFtraceEvent", "reason", 2},
    {"IrqHandlerEntryFtraceEvent", "irq", 1},
    {"IrqHandlerEntryFtraceEvent", "name", 2},
    {"IrqHandlerEntryFtraceEvent", "handler", 3},
    {"IrqHandlerExitFtraceEvent", "irq", 1},
    {"IrqHandlerExitFtraceEvent", "ret", 2},
    {"KfreeSkbFtraceEvent", "location", 1},
    {"KfreeSkbFtraceEvent", "protocol", 2},
    {"KfreeSkbFtraceEvent", "skbaddr", 3},
    {"LocalTimerEntryFtraceEvent", "vector", 1},
    {"LocalTimerExitFtraceEvent", "vector", 1},
    {"NapiGroReceiveEntryFtraceEvent", "data_len", 1},
    {"NapiGroReceiveEntryFtraceEvent", "len", 7},
    {"NapiGroReceiveEntryFtraceEvent", "name", 10},
    {"NapiGroReceiveEntryFtraceEvent", "napi_id", 11},
    {"NapiGroReceiveEntryFtraceEvent", "queue_mapping", 14},
    {"NapiGroReceiveEntryFtraceEvent", "skbaddr", 15},
    {"NapiGroReceiveExitFtraceEvent", "ret", 1},
    {"NetDevXmitFtraceEvent", "len", 1},
    {"NetDevXmitFtraceEvent", "name", 2},
    {"NetDevXmitFtraceEvent", "rc", 3},
    {"NetDevXmitFtraceEvent", "skbaddr", 4},
    {"NetifReceiveSkbFtraceEvent", "len", 1},
    {"NetifReceiveSkbFtraceEvent", "name", 2},
    {"NetifReceiveSkbFtraceEvent", "skbaddr", 3},
    {"ProcessDescriptor", "pid", 1},
    {"ProcessDescriptor", "cmdline", 2},
    {"ProcessDescriptor", "process_name", 6},
    {"ProcessDescriptor", "start_timestamp_ns", 7},
    {"ProcessDescriptor", "process_labels", 8},
    {"ProcessTree", "processes", 1},
    {"ProcessTree", "threads", 2},
    {"ProcessTree", "collection_end_timestamp", 3},
    {"ProcessTree.Process", "pid", 1},
    {"ProcessTree.Process", "ppid", 2},
    {"ProcessTree.Process", "cmdline", 3},
    {"ProcessTree.Process", "uid", 5},
    {"ProcessTree.Process", "process_start_from_boot", 7},
    {"ProcessTree.Process", "is_kthread", 8},
    {"ProcessTree.Process", "cmdline_is_comm", 9},
    {"ProcessTree.Thread", "tid", 1},
    {"ProcessTree.Thread", "name", 2},
    {"ProcessTree.Thread", "tgid", 3},
    {"SchedMigrateTaskFtraceEvent", "comm", 1},
    {"SchedMigrateTaskFtraceEvent", "pid", 2},
    {"SchedMigrateTaskFtraceEvent", "prio", 3},
    {"SchedMigrateTaskFtraceEvent", "orig_cpu", 4},
    {"SchedMigrateTaskFtraceEvent", "dest_cpu", 5},
    {"SchedMigrateTaskFtraceEvent", "running", 6},
    {"SchedMigrateTaskFtraceEvent", "load", 7},
    {"SchedProcessExecFtraceEvent", "filename", 1},
    {"SchedProcessExecFtraceEvent", "pid", 2},
    {"SchedProcessExecFtraceEvent", "old_pid", 3},
    {"SchedProcessExitFtraceEvent", "comm", 1},
    {"SchedProcessExitFtraceEvent", "pid", 2},
    {"SchedProcessExitFtraceEvent", "tgid", 3},
    {"SchedProcessExitFtraceEvent", "prio", 4},
    {"SchedProcessForkFtraceEvent", "parent_comm", 1},
    {"SchedProcessForkFtraceEvent", "parent_pid", 2},
    {"SchedProcessForkFtraceEvent", "child_comm", 3},
    {"SchedProcessForkFtraceEvent", "child_pid", 4},
    {"SchedProcessFreeFtraceEvent", "comm", 1},
    {"SchedProcessFreeFtraceEvent", "pid", 2},
    {"SchedProcessFreeFtraceEvent", "prio", 3},
    {"SchedSwitchFtraceEvent", "prev_comm", 1},
    {"SchedSwitchFtraceEvent", "prev_pid", 2},
    {"SchedSwitchFtraceEvent", "prev_prio", 3},
    {"SchedSwitchFtraceEvent", "prev_state", 4},
    {"SchedSwitchFtraceEvent", "next_comm", 5},
    {"SchedSwitchFtraceEvent", "next_pid", 6},
    {"SchedSwitchFtraceEvent", "next_prio", 7},
    {"SchedWakeupNewFtraceEvent", "comm", 1},
    {"SchedWakeupNewFtraceEvent", "pid", 2},
    {"SchedWakeupNewFtraceEvent", "prio", 3},
    {"SchedWakeupNewFtraceEvent", "success", 4},
    {"SchedWakeupNewFtraceEvent", "target_cpu", 5},
    {"SchedWakingFtraceEvent", "comm", 1},
    {"SchedWakingFtraceEvent", "pid", 2},
    {"SchedWakingFtraceEvent", "prio", 3},
    {"SchedWakingFtraceEvent", "success", 4},
    {"SchedWakingFtraceEvent", "target_cpu", 5},
    {"SoftirqEntryFtraceEvent", "vec", 1},
    {"SoftirqExitFtraceEvent", "vec", 1},
    {"SoftirqRaiseFtraceEvent", "vec", 1},
    {"SystemInfo", "utsname", 1},
    {"SystemInfo", "hz", 3},
    {"SystemInfo", "tracing_service_version", 4},
    {"SystemInfo", "page_size", 6},
    {"SystemInfo", "timezone_off_mins", 7},
    {"SystemInfo", "num_cpus", 8},
    {"SystemInfo", "system_ram_bytes", 16},
    {"SystemInfo", "machine_name", 17},
    {"TaskNewtaskFtraceEvent", "pid", 1},
    {"TaskNewtaskFtraceEvent", "comm", 2},
    {"TaskNewtaskFtraceEvent", "clone_flags", 3},
    {"TaskNewtaskFtraceEvent", "oom_score_adj", 4},
    {"TaskRenameFtraceEvent", "pid", 1},
    {"TaskRenameFtraceEvent", "oldcomm", 2},
    {"TaskRenameFtraceEvent", "newcomm", 3},
    {"TaskRenameFtraceEvent", "oom_score_adj", 4},
    {"TcpRetransmitSkbFtraceEvent", "daddr", 1},
    {"TcpRetransmitSkbFtraceEvent", "dport", 2},
    {"TcpRetransmitSkbFtraceEvent", "saddr", 3},
    {"TcpRetransmitSkbFtraceEvent", "skaddr", 4},
    {"TcpRetransmitSkbFtraceEvent", "skbaddr", 5},
    {"TcpRetransmitSkbFtraceEvent", "sport", 6},
    {"TcpRetransmitSkbFtraceEvent", "state", 7},
    {"ThreadDescriptor", "pid", 1},
    {"ThreadDescriptor", "tid", 2},
    {"ThreadDescriptor", "thread_name", 5},
    {"Trace", "packet", 1},
    {"TracePacket", "ftrace_events", 1},
    {"TracePacket", "process_tree", 2},
    {"TracePacket", "clock_snapshot", 6},
    {"TracePacket", "timestamp", 8},
    {"TracePacket", "trusted_packet_sequence_id", 10},
    {"TracePacket", "track_event", 11},
    {"TracePacket", "interned_data", 12},
    {"TracePacket", "sequence_flags", 13},
    {"TracePacket", "ftrace_stats", 34},
    {"TracePacket", "incremental_state_cleared", 41},
    {"TracePacket", "previous_packet_dropped", 42},
    {"TracePacket", "system_info", 45},
    {"TracePacket", "compressed_packets", 50},
    {"TracePacket", "timestamp_clock_id", 58},
    {"TracePacket", "track_descriptor", 60},
    {"TracePacket", "trusted_pid", 79},
    {"TracePacket", "first_packet_on_sequence", 87},
    {"TracePacket", "trace_uuid", 89},
    {"TracePacket", "machine_id", 98},
    {"TracePacket", "interrupt_info", 130},
    {"TraceUuid", "msb", 1},
    {"TraceUuid", "lsb", 2},
    {"TrackDescriptor", "uuid", 1},
    {"TrackDescriptor", "name", 2},
    {"TrackDescriptor", "process", 3},
    {"TrackDescriptor", "thread", 4},
    {"TrackDescriptor", "parent_uuid", 5},
    {"TrackDescriptor", "counter", 8},
    {"TrackDescriptor", "disallow_merging_with_system_tracks", 9},
    {"TrackDescriptor", "static_name", 10},
    {"TrackDescriptor", "child_ordering", 11},
    {"TrackDescriptor", "sibling_order_rank", 12},
    {"TrackDescriptor", "description", 14},
    {"TrackEvent", "category_iids", 3},
    {"TrackEvent", "debug_annotations", 4},
    {"TrackEvent", "type", 9},
    {"TrackEvent", "name_iid", 10},
    {"TrackEvent", "track_uuid", 11},
    {"TrackEvent", "extra_counter_values", 12},
    {"TrackEvent", "categories", 22},
    {"TrackEvent", "name", 23},
    {"TrackEvent", "counter_value", 30},
    {"TrackEvent", "extra_counter_track_uuids", 31},
    {"TrackEvent", "double_counter_value", 44},
    {"TrackEvent", "extra_double_counter_track_uuids", 45},
    {"TrackEvent", "extra_double_counter_values", 46},
    {"TrackEvent", "flow_ids", 47},
    {"TrackEvent", "terminating_flow_ids", 48},
    {"TrackEvent", "correlation_id", 52},
    {"TrackEvent", "correlation_id_str", 53},
    {"Utsname", "sysname", 1},
    {"Utsname", "version", 2},
    {"Utsname", "release", 3},
    {"Utsname", "machine", 4},
};

const google::protobuf::FileDescriptor* SubsetFile() {
  return Trace::descriptor()->file();
}

TEST(FieldNumbers, EveryPinnedFieldMatchesUpstream) {
  for (const Pin& pin : kUpstreamNumbers) {
    const auto* msg = SubsetFile()->pool()->FindMessageTypeByName(
        std::string("gpunoise.perfetto.") + pin.message);
    ASSERT_NE(msg, nullptr) << pin.message;
    const auto* field = msg->FindFieldByName(pin.field);
    ASSERT_NE(field, nullptr) << pin.message << "." << pin.field;
    EXPECT_EQ(field->number(), pin.number) << pin.message << "." << pin.field;
  }
}

void CollectFields(const google::protobuf::Descriptor* msg, const std::string& prefix,
                   std::set<std::string>* out) {
  std::string name = prefix + msg->name();
  for (int i = 0; i < msg->field_count(); ++i) out->insert(name + "." + msg->field(i)->name());
  for (int i = 0; i < msg->nested_type_count(); ++i)
    CollectFields(msg->nested_type(i), name + ".", out);
}

TEST(FieldNumbers, EveryFieldOfTheSubsetIsPinned) {
  std::set<std::string> declared;
  for (int i = 0; i < SubsetFile()->message_type_count(); ++i)
    CollectFields(SubsetFile()->message_type(i), "", &declared);
  std::set<std::string> pinned;
  for (const Pin& pin : kUpstreamNumbers)
    pinned.insert(std::string(pin.message) + "." + pin.field);
  for (const auto& f : declared) EXPECT_TRUE(pinned.count(f)) << f << " has no pin";
}

TEST(FieldNumbers, KeyNumbersByHand) {
  // The handful the UI cannot live without, spelled out.
  EXPECT_EQ(TracePacket::kFtraceEventsFieldNumber, 1);
  EXPECT_EQ(TracePacket::kTrustedPacketSequenceIdFieldNumber, 10);
  EXPECT_EQ(FtraceEventBundle::kCompactSchedFieldNumber, 4);
  EXPECT_EQ(FtraceEventBundle_CompactSched::kSwitchTimestampFieldNumber, 1);
  EXPECT_EQ(FtraceEventBundle_CompactSched::kInternTableFieldNumber, 5);
  EXPECT_EQ(FtraceEvent::kIrqHandlerEntryFieldNumber, 36);
  EXPECT_EQ(FtraceEvent::kSoftirqEntryFieldNumber, 24);
  EXPECT_EQ(TracePacket::kTrackEventFieldNumber, 11);
  EXPECT_EQ(TracePacket::kTrackDescriptorFieldNumber, 60);
  EXPECT_EQ(TracePacket::kCompressedPacketsFieldNumber, 50);
}

}  // namespace
}  // namespace gpunoise::perfetto
