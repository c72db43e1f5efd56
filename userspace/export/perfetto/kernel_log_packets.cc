#include "export/perfetto/kernel_log_packets.h"

#include "common/proto_wire.h"
#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::perfetto {
namespace {

using Event = pf::AndroidLogPacket::LogEvent;
using Arg = pf::AndroidLogPacket::LogEvent::Arg;

void StrArg(ProtoWriter& w, std::string_view name, std::string_view value) {
  if (value.empty()) return;
  size_t t = w.BeginMessage(Event::kArgs);
  w.Bytes(Arg::kName, name);
  w.Bytes(Arg::kStringValue, value);
  w.EndMessage(t);
}
void IntArg(ProtoWriter& w, std::string_view name, int64_t value) {
  size_t t = w.BeginMessage(Event::kArgs);
  w.Bytes(Arg::kName, name);
  w.Int(Arg::kIntValue, value);
  w.EndMessage(t);
}

}  // namespace

uint32_t AndroidPriorityOfLevel(uint8_t level) {
  if (level <= 2) return pf::PRIO_FATAL;  // emerg, alert, crit
  if (level == 3) return pf::PRIO_ERROR;
  if (level == 4) return pf::PRIO_WARN;
  if (level <= 6) return pf::PRIO_INFO;   // notice, info
  return pf::PRIO_DEBUG;
}

void EncodeKernelLogPacket(std::span<const model::KernelLogEntry> entries, int64_t realtime_minus_boottime,
                           uint64_t lost, uint32_t sequence_id, std::string* packet) {
  ProtoWriter w(packet);
  w.Varint(pf::TracePacket::kTrustedPacketSequenceId, sequence_id);
  size_t log = w.BeginNested(pf::TracePacket::kAndroidLog);
  for (const model::KernelLogEntry& e : entries) {
    size_t ev = w.BeginMessage(pf::AndroidLogPacket::kEvents);
    w.Varint(Event::kLogId, pf::LID_KERNEL);
    // The printk's caller (console tracepoint): the trace processor attaches
    // the message to that thread (android_logs.utid).
    // Only with its process known: a thread claimed for the wrong process
    // would be worse than none (the black box has the tid alone; it goes in
    // the args).
    if (e.tid >= 0 && e.pid >= 0) {
      w.Varint(Event::kPid, static_cast<uint64_t>(e.pid));
      w.Varint(Event::kTid, static_cast<uint64_t>(e.tid));
    }
    w.Varint(Event::kTimestamp, static_cast<uint64_t>(static_cast<int64_t>(e.ts) + realtime_minus_boottime));
    w.Bytes(Event::kTag, e.cls == model::KernelLogClass::kNone ? std::string_view("kernel")
                                                                            : model::KernelLogClassName(e.cls));
    w.Varint(Event::kPrio, AndroidPriorityOfLevel(e.level));
    w.Bytes(Event::kMessage, e.text);
    IntArg(w, "seq", static_cast<int64_t>(e.seq));
    IntArg(w, "level", e.level);
    IntArg(w, "facility", e.facility);
    IntArg(w, "usec", static_cast<int64_t>(e.usec));
    // The record's time on the trace clock (the packet's own is REALTIME), so
    // readers without clock conversion place it exactly where this one did.
    IntArg(w, "ts_boot", static_cast<int64_t>(e.ts));
    StrArg(w, "device", e.device);
    StrArg(w, "subsystem", e.subsystem);
    StrArg(w, "about", e.about);
    StrArg(w, "source", model::KernelLogSourceName(e.source));
    if (e.cpu >= 0) IntArg(w, "cpu", e.cpu);
    if (e.tid >= 0) IntArg(w, "tid", e.tid);
    StrArg(w, "comm", e.comm);
    w.EndMessage(ev);
  }
  size_t stats = w.BeginMessage(pf::AndroidLogPacket::kStats);
  w.Varint(pf::AndroidLogPacket::Stats::kNumTotal, entries.size() + lost);
  // Records the kernel's ring overwrote before they were read (sequence gaps).
  w.Varint(pf::AndroidLogPacket::Stats::kNumFailed, lost);
  w.EndMessage(stats);
  w.EndNested(log);
}

}  // namespace gpunoise::perfetto
