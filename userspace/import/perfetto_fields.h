// Field numbers of the Perfetto messages the trace reader decodes by hand.
// They are those of google/perfetto's protos/perfetto/trace/perfetto_trace.proto;
// tests/import/perfetto_fields_test.cc checks each one against the project's
// pinned subset proto (export/perfetto/protos), and pins the few the subset
// does not declare to the upstream number.
#pragma once

#include <cstdint>

namespace gpunoise::import::fields {

namespace trace {
inline constexpr uint32_t kPacket = 1;
}

namespace packet {
inline constexpr uint32_t kFtraceEvents = 1;
inline constexpr uint32_t kProcessTree = 2;
inline constexpr uint32_t kClockSnapshot = 6;
inline constexpr uint32_t kTimestamp = 8;
inline constexpr uint32_t kTrustedPacketSequenceId = 10;
inline constexpr uint32_t kTrackEvent = 11;
inline constexpr uint32_t kInternedData = 12;
inline constexpr uint32_t kSequenceFlags = 13;
inline constexpr uint32_t kFtraceStats = 34;
inline constexpr uint32_t kAndroidLog = 39;
inline constexpr uint32_t kTraceStats = 35;
inline constexpr uint32_t kIncrementalStateCleared = 41;
inline constexpr uint32_t kPreviousPacketDropped = 42;  // DataLossReason bits; 0: none
inline constexpr uint32_t kSystemInfo = 45;
inline constexpr uint32_t kMachineId = 98;  // which machine of a merged trace; 0/absent: the host
inline constexpr uint32_t kCompressedPackets = 50;  // deflate (zlib stream)
inline constexpr uint32_t kTimestampClockId = 58;
inline constexpr uint32_t kTracePacketDefaults = 59;
inline constexpr uint32_t kTrackDescriptor = 60;
inline constexpr uint32_t kInterruptInfo = 130;
inline constexpr uint32_t kZstdCompressedPackets = 133;
inline constexpr uint32_t kSeqIncrementalStateCleared = 1;  // SequenceFlags bit
}  // namespace packet

// AndroidLogPacket (protos/perfetto/trace/android/android_log.proto).
namespace android_log {
inline constexpr uint32_t kEvents = 1;
inline constexpr uint32_t kStats = 2;
inline constexpr uint32_t kLogId = 1;
inline constexpr uint32_t kPid = 2;
inline constexpr uint32_t kTid = 3;
inline constexpr uint32_t kTag = 6;
inline constexpr uint32_t kPrio = 7;
inline constexpr uint32_t kMessage = 8;
inline constexpr uint32_t kArgs = 9;
inline constexpr uint32_t kArgName = 1;
inline constexpr uint32_t kArgInt = 2;
inline constexpr uint32_t kArgString = 4;
inline constexpr uint32_t kStatsFailed = 2;
inline constexpr uint32_t kLidKernel = 7;
}  // namespace android_log

namespace packet_defaults {
inline constexpr uint32_t kTrackEventDefaults = 11;
}
namespace track_event_defaults {
inline constexpr uint32_t kTrackUuid = 11;
}

namespace bundle {
inline constexpr uint32_t kCpu = 1;
inline constexpr uint32_t kEvent = 2;
inline constexpr uint32_t kLostEvents = 3;
inline constexpr uint32_t kCompactSched = 4;
inline constexpr uint32_t kFtraceClock = 5;      // absent = boot clock
inline constexpr uint32_t kFtraceTimestamp = 6;  // with kBootTimestamp: clock pair
inline constexpr uint32_t kBootTimestamp = 7;
inline constexpr uint32_t kPreviousBundleEndTimestamp = 10;
}  // namespace bundle

namespace compact {
inline constexpr uint32_t kSwitchTimestamp = 1;
inline constexpr uint32_t kSwitchPrevState = 2;
inline constexpr uint32_t kSwitchNextPid = 3;
inline constexpr uint32_t kSwitchNextPrio = 4;
inline constexpr uint32_t kInternTable = 5;
inline constexpr uint32_t kSwitchNextCommIndex = 6;
inline constexpr uint32_t kWakingTimestamp = 7;
inline constexpr uint32_t kWakingPid = 8;
inline constexpr uint32_t kWakingTargetCpu = 9;
inline constexpr uint32_t kWakingPrio = 10;
inline constexpr uint32_t kWakingCommIndex = 11;
inline constexpr uint32_t kWakingCommonFlags = 12;
}  // namespace compact

namespace ftrace_event {
inline constexpr uint32_t kTimestamp = 1;
inline constexpr uint32_t kPid = 2;
inline constexpr uint32_t kCommonFlags = 5;
inline constexpr uint32_t kSchedSwitch = 4;
inline constexpr uint32_t kSchedWakeup = 17;
inline constexpr uint32_t kSchedWaking = 20;
inline constexpr uint32_t kIpiEntry = 21;
inline constexpr uint32_t kIpiExit = 22;
inline constexpr uint32_t kSoftirqEntry = 24;
inline constexpr uint32_t kSoftirqExit = 25;
inline constexpr uint32_t kSoftirqRaise = 26;
inline constexpr uint32_t kIrqHandlerEntry = 36;
inline constexpr uint32_t kIrqHandlerExit = 37;
inline constexpr uint32_t kSchedWakeupNew = 114;
inline constexpr uint32_t kTaskNewtask = 235;
inline constexpr uint32_t kTaskRename = 236;
inline constexpr uint32_t kSchedProcessExec = 237;
inline constexpr uint32_t kSchedProcessExit = 238;
inline constexpr uint32_t kSchedProcessFork = 239;
inline constexpr uint32_t kGeneric = 327;
inline constexpr uint32_t kNetifReceiveSkb = 360;
inline constexpr uint32_t kNetDevXmit = 361;
inline constexpr uint32_t kTcpRetransmitSkb = 363;
inline constexpr uint32_t kNapiGroReceiveEntry = 365;
inline constexpr uint32_t kKfreeSkb = 367;
inline constexpr uint32_t kSchedMigrateTask = 491;
inline constexpr uint32_t kLocalTimerEntry = 559;
inline constexpr uint32_t kLocalTimerExit = 560;
}  // namespace ftrace_event

// SchedSwitchFtraceEvent
namespace sched_switch {
inline constexpr uint32_t kPrevComm = 1;
inline constexpr uint32_t kPrevPid = 2;
inline constexpr uint32_t kPrevPrio = 3;
inline constexpr uint32_t kPrevState = 4;
inline constexpr uint32_t kNextComm = 5;
inline constexpr uint32_t kNextPid = 6;
inline constexpr uint32_t kNextPrio = 7;
}  // namespace sched_switch

// SchedWakingFtraceEvent, SchedWakeupFtraceEvent, SchedWakeupNewFtraceEvent
namespace sched_wake {
inline constexpr uint32_t kComm = 1;
inline constexpr uint32_t kPid = 2;
inline constexpr uint32_t kPrio = 3;
inline constexpr uint32_t kTargetCpu = 5;
}  // namespace sched_wake

namespace sched_migrate {
inline constexpr uint32_t kComm = 1;
inline constexpr uint32_t kPid = 2;
inline constexpr uint32_t kPrio = 3;
inline constexpr uint32_t kOrigCpu = 4;
inline constexpr uint32_t kDestCpu = 5;
}  // namespace sched_migrate

namespace process_exec {
inline constexpr uint32_t kFilename = 1;
inline constexpr uint32_t kPid = 2;
inline constexpr uint32_t kOldPid = 3;
}  // namespace process_exec

namespace process_exit {
inline constexpr uint32_t kComm = 1;
inline constexpr uint32_t kPid = 2;
inline constexpr uint32_t kTgid = 3;
inline constexpr uint32_t kPrio = 4;
}  // namespace process_exit

namespace process_fork {
inline constexpr uint32_t kParentComm = 1;
inline constexpr uint32_t kParentPid = 2;
inline constexpr uint32_t kChildComm = 3;
inline constexpr uint32_t kChildPid = 4;
}  // namespace process_fork

namespace task_newtask {
inline constexpr uint32_t kPid = 1;
inline constexpr uint32_t kComm = 2;
inline constexpr uint32_t kCloneFlags = 3;
}  // namespace task_newtask

namespace task_rename {
inline constexpr uint32_t kPid = 1;
inline constexpr uint32_t kOldcomm = 2;
inline constexpr uint32_t kNewcomm = 3;
}  // namespace task_rename

namespace irq_entry {
inline constexpr uint32_t kIrq = 1;
inline constexpr uint32_t kName = 2;
}
namespace irq_exit {
inline constexpr uint32_t kIrq = 1;
inline constexpr uint32_t kRet = 2;
}
namespace softirq {
inline constexpr uint32_t kVec = 1;  // entry, exit and raise alike
}
namespace local_timer {
inline constexpr uint32_t kVector = 1;
}
namespace ipi {
inline constexpr uint32_t kReason = 1;  // entry and exit
}

namespace netif_receive_skb {
inline constexpr uint32_t kLen = 1;
inline constexpr uint32_t kName = 2;
}
namespace net_dev_xmit {
inline constexpr uint32_t kLen = 1;
inline constexpr uint32_t kName = 2;
inline constexpr uint32_t kRc = 3;
}
namespace napi_gro_receive_entry {
inline constexpr uint32_t kLen = 7;
inline constexpr uint32_t kName = 10;
inline constexpr uint32_t kNapiId = 11;
inline constexpr uint32_t kQueueMapping = 14;
}
namespace kfree_skb {
inline constexpr uint32_t kLocation = 1;
inline constexpr uint32_t kProtocol = 2;
}

namespace generic {
inline constexpr uint32_t kEventName = 1;
inline constexpr uint32_t kField = 2;
inline constexpr uint32_t kFieldName = 1;
inline constexpr uint32_t kFieldStrValue = 3;
inline constexpr uint32_t kFieldIntValue = 4;
inline constexpr uint32_t kFieldUintValue = 5;
}  // namespace generic

namespace process_tree {
inline constexpr uint32_t kProcesses = 1;
inline constexpr uint32_t kThreads = 2;
inline constexpr uint32_t kProcessPid = 1;
inline constexpr uint32_t kProcessPpid = 2;
inline constexpr uint32_t kProcessCmdline = 3;
inline constexpr uint32_t kProcessIsKthread = 8;
inline constexpr uint32_t kThreadTid = 1;
inline constexpr uint32_t kThreadName = 2;
inline constexpr uint32_t kThreadTgid = 3;
}  // namespace process_tree

namespace interrupt_info {
inline constexpr uint32_t kIrqMapping = 1;
inline constexpr uint32_t kIrqId = 1;
inline constexpr uint32_t kName = 2;
}  // namespace interrupt_info

namespace system_info {
inline constexpr uint32_t kUtsname = 1;
inline constexpr uint32_t kTracingServiceVersion = 4;
inline constexpr uint32_t kNumCpus = 8;
inline constexpr uint32_t kMachineName = 17;
inline constexpr uint32_t kUtsSysname = 1;
inline constexpr uint32_t kUtsVersion = 2;
inline constexpr uint32_t kUtsRelease = 3;
inline constexpr uint32_t kUtsMachine = 4;
}  // namespace system_info

namespace ftrace_stats {
inline constexpr uint32_t kPhase = 1;
inline constexpr uint32_t kCpuStats = 2;
inline constexpr uint32_t kAtraceErrors = 5;
inline constexpr uint32_t kUnknownFtraceEvents = 6;
inline constexpr uint32_t kFailedFtraceEvents = 7;
inline constexpr uint32_t kPreserveFtraceBuffer = 8;
inline constexpr uint32_t kFtraceParseErrors = 9;  // repeated enum FtraceParseStatus
inline constexpr uint32_t kKprobeStats = 10;
inline constexpr uint32_t kExclusiveFeatureError = 13;
// FtraceCpuStats
inline constexpr uint32_t kCpu = 1;
inline constexpr uint32_t kEntries = 2;
inline constexpr uint32_t kOverrun = 3;
inline constexpr uint32_t kCommitOverrun = 4;
inline constexpr uint32_t kBytesRead = 5;  // bytes in the ring now, despite the name
inline constexpr uint32_t kOldestEventTs = 6;  // double, seconds
inline constexpr uint32_t kNowTs = 7;          // double, seconds
inline constexpr uint32_t kDroppedEvents = 8;
inline constexpr uint32_t kReadEvents = 9;
// FtraceKprobeStats
inline constexpr uint32_t kKprobeHits = 1;
inline constexpr uint32_t kKprobeMisses = 2;
inline constexpr uint32_t kPhaseStart = 1;  // FtraceStats.Phase START_OF_TRACE
inline constexpr uint32_t kPhaseEnd = 2;    // FtraceStats.Phase END_OF_TRACE
}  // namespace ftrace_stats

namespace trace_stats {
inline constexpr uint32_t kBufferStats = 1;
inline constexpr uint32_t kChunksDiscarded = 8;
inline constexpr uint32_t kPatchesDiscarded = 9;
inline constexpr uint32_t kInvalidPackets = 10;
inline constexpr uint32_t kFilterStats = 11;
inline constexpr uint32_t kFlushesRequested = 12;
inline constexpr uint32_t kFlushesSucceeded = 13;
inline constexpr uint32_t kFlushesFailed = 14;
inline constexpr uint32_t kFinalFlushOutcome = 15;
inline constexpr uint32_t kFinalFlushFailed = 2;  // FinalFlushOutcome FINAL_FLUSH_FAILED
inline constexpr uint32_t kFilterErrors = 4;      // FilterStats.errors
// TraceStats.BufferStats
inline constexpr uint32_t kBufBytesWritten = 1;
inline constexpr uint32_t kBufChunksWritten = 2;
inline constexpr uint32_t kBufChunksOverwritten = 3;
inline constexpr uint32_t kBufPatchesFailed = 6;
inline constexpr uint32_t kBufReadaheadsFailed = 8;
inline constexpr uint32_t kBufAbiViolations = 9;
inline constexpr uint32_t kBufChunksRewritten = 10;
inline constexpr uint32_t kBufBufferSize = 12;
inline constexpr uint32_t kBufBytesOverwritten = 13;
inline constexpr uint32_t kBufChunksDiscarded = 18;
inline constexpr uint32_t kBufTraceWriterPacketLoss = 19;
}  // namespace trace_stats

namespace track_descriptor {
inline constexpr uint32_t kUuid = 1;
inline constexpr uint32_t kName = 2;
inline constexpr uint32_t kProcess = 3;
inline constexpr uint32_t kThread = 4;
inline constexpr uint32_t kParentUuid = 5;
inline constexpr uint32_t kCounter = 8;
inline constexpr uint32_t kStaticName = 10;
inline constexpr uint32_t kProcessPid = 1;
inline constexpr uint32_t kProcessName = 6;
inline constexpr uint32_t kThreadPid = 1;
inline constexpr uint32_t kThreadTid = 2;
inline constexpr uint32_t kThreadName = 5;
}  // namespace track_descriptor

namespace track_event {
inline constexpr uint32_t kCategoryIids = 3;
inline constexpr uint32_t kDebugAnnotations = 4;
inline constexpr uint32_t kType = 9;
inline constexpr uint32_t kNameIid = 10;
inline constexpr uint32_t kTrackUuid = 11;
inline constexpr uint32_t kCategories = 22;
inline constexpr uint32_t kName = 23;
inline constexpr uint32_t kCounterValue = 30;
inline constexpr uint32_t kDoubleCounterValue = 44;
inline constexpr uint32_t kFlowIds = 47;             // fixed64
inline constexpr uint32_t kTerminatingFlowIds = 48;  // fixed64
inline constexpr uint32_t kCorrelationId = 52;
inline constexpr uint32_t kTypeSliceBegin = 1;
inline constexpr uint32_t kTypeSliceEnd = 2;
inline constexpr uint32_t kTypeInstant = 3;
inline constexpr uint32_t kTypeCounter = 4;
}  // namespace track_event

namespace debug_annotation {
inline constexpr uint32_t kNameIid = 1;
inline constexpr uint32_t kBoolValue = 2;
inline constexpr uint32_t kUintValue = 3;
inline constexpr uint32_t kIntValue = 4;
inline constexpr uint32_t kDoubleValue = 5;
inline constexpr uint32_t kStringValue = 6;
inline constexpr uint32_t kPointerValue = 7;
inline constexpr uint32_t kName = 10;
inline constexpr uint32_t kStringValueIid = 17;
}  // namespace debug_annotation

namespace interned_data {
inline constexpr uint32_t kEventCategories = 1;
inline constexpr uint32_t kEventNames = 2;
inline constexpr uint32_t kDebugAnnotationNames = 3;
inline constexpr uint32_t kDebugAnnotationStringValues = 29;
inline constexpr uint32_t kIid = 1;          // EventName, EventCategory, DebugAnnotationName
inline constexpr uint32_t kName = 2;
inline constexpr uint32_t kInternedStringStr = 2;  // InternedString.str (bytes)
}  // namespace interned_data

}  // namespace gpunoise::import::fields
