#include "export/perfetto/ftrace_bundle_encoder.h"

#include <cstring>
#include <type_traits>

#include "common/proto_wire.h"
#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {
namespace {

constexpr uint64_t kCloneThread = 0x00010000;  // include/uapi/linux/sched.h

// The kernel's __u8 addr[4] read as one little-endian word, which is what
// Perfetto's own recorder stores for these fields.
uint32_t Ipv4Word(const std::array<uint8_t, 16>& addr) {
  uint32_t w = 0;
  std::memcpy(&w, addr.data(), sizeof(w));
  return w;
}

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// One nested message, exactly framed, written by `body`.
template <typename Body>
void Message(ProtoWriter& w, uint32_t field, Body&& body) {
  size_t token = w.BeginMessage(field);
  body();
  w.EndMessage(token);
}

// Field numbers come from the generated subset, pinned to upstream's schema.
using Event = FtraceEvent;
using Generic = GenericFtraceEvent;
using GenericField = GenericFtraceEvent_Field;

void GenericStr(ProtoWriter& w, std::string_view name, std::string_view value) {
  Message(w, Generic::kFieldFieldNumber, [&] {
    w.Bytes(GenericField::kNameFieldNumber, name);
    w.Bytes(GenericField::kStrValueFieldNumber, value);
  });
}
void GenericInt(ProtoWriter& w, std::string_view name, int64_t value) {
  Message(w, Generic::kFieldFieldNumber, [&] {
    w.Bytes(GenericField::kNameFieldNumber, name);
    w.Int(GenericField::kIntValueFieldNumber, value);
  });
}
void GenericUint(ProtoWriter& w, std::string_view name, uint64_t value) {
  Message(w, Generic::kFieldFieldNumber, [&] {
    w.Bytes(GenericField::kNameFieldNumber, name);
    w.Varint(GenericField::kUintValueFieldNumber, value);
  });
}

}  // namespace

bool HasFtraceForm(const model::Event& event) {
  if (auto* v = std::get_if<model::VectorEntry>(&event.payload))
    return v->kind == model::VectorKind::kLocalTimer;
  if (auto* v = std::get_if<model::VectorExit>(&event.payload))
    return v->kind == model::VectorKind::kLocalTimer;
  return true;
}

void FtraceBundleEncoder::EncodePacket(const BundleInfo& info, std::span<const model::Event> events,
                                       IrqNameSource& irq_names, std::string* packet) {
  ProtoWriter w(packet);
  size_t bundle_token = w.BeginMessage(TracePacket::kFtraceEventsFieldNumber);
  w.Varint(FtraceEventBundle::kCpuFieldNumber, info.cpu);
  if (info.lost_events) w.Bool(FtraceEventBundle::kLostEventsFieldNumber, true);
  if (info.previous_bundle_end_timestamp)
    w.Varint(FtraceEventBundle::kPreviousBundleEndTimestampFieldNumber, info.previous_bundle_end_timestamp);

  for (const model::Event& ev : events) {
    // One FtraceEvent: timestamp, pid (the task current when it fired) and
    // the event's own message as field `kind`, written by `fields`.
    auto event = [&](uint32_t kind, auto&& fields) {
      Message(w, FtraceEventBundle::kEventFieldNumber, [&] {
        w.Varint(Event::kTimestampFieldNumber, ev.ts);
        w.Varint(Event::kPidFieldNumber, static_cast<uint32_t>(ev.tid));
        if (ev.common_flags) w.Varint(Event::kCommonFlagsFieldNumber, ev.common_flags);
        Message(w, kind, fields);
      });
    };
    auto comm = [&](uint32_t field, const model::TaskComm& c) { w.Bytes(field, c.view()); };
    std::visit(
        Overloaded{
            [&](const model::SchedSwitch& e) { compact_.AddSwitch(ev.ts, e); },
            [&](const model::SchedWaking& e) {
              if (!e.is_new_task) {
                compact_.AddWaking(ev.ts, e, ev.common_flags);
                return;
              }
              using M = SchedWakeupNewFtraceEvent;
              event(Event::kSchedWakeupNewFieldNumber, [&] {
                comm(M::kCommFieldNumber, e.comm);
                w.Int(M::kPidFieldNumber, e.tid);
                w.Int(M::kPrioFieldNumber, e.prio);
                w.Int(M::kSuccessFieldNumber, 1);
                w.Int(M::kTargetCpuFieldNumber, e.target_cpu);
              });
            },
            [&](const model::SchedMigrate& e) {
              using M = SchedMigrateTaskFtraceEvent;
              event(Event::kSchedMigrateTaskFieldNumber, [&] {
                comm(M::kCommFieldNumber, e.comm);
                w.Int(M::kPidFieldNumber, e.tid);
                w.Int(M::kPrioFieldNumber, e.prio);
                w.Int(M::kOrigCpuFieldNumber, e.orig_cpu);
                w.Int(M::kDestCpuFieldNumber, e.dest_cpu);
              });
            },
            [&](const model::ProcessFork& e) {
              // task_newtask is what the trace processor uses to bind a new
              // thread to its process (clone flags) and to name it.
              using M = TaskNewtaskFtraceEvent;
              event(Event::kTaskNewtaskFieldNumber, [&] {
                w.Int(M::kPidFieldNumber, e.child_tid);
                comm(M::kCommFieldNumber, e.child_comm);
                w.Varint(M::kCloneFlagsFieldNumber, e.is_thread ? kCloneThread : 0);
              });
            },
            [&](const model::ProcessExec& e) {
              using M = SchedProcessExecFtraceEvent;
              event(Event::kSchedProcessExecFieldNumber, [&] {
                w.Bytes(M::kFilenameFieldNumber, e.filename);
                w.Int(M::kPidFieldNumber, e.tid);
                w.Int(M::kOldPidFieldNumber, e.old_tid);
              });
            },
            [&](const model::ProcessExit& e) {
              using M = SchedProcessExitFtraceEvent;
              event(Event::kSchedProcessExitFieldNumber, [&] {
                comm(M::kCommFieldNumber, e.comm);
                w.Int(M::kPidFieldNumber, e.tid);
                w.Int(M::kTgidFieldNumber, e.tgid);
                w.Int(M::kPrioFieldNumber, e.prio);
              });
            },
            [&](const model::TaskRename& e) {
              using M = TaskRenameFtraceEvent;
              event(Event::kTaskRenameFieldNumber, [&] {
                w.Int(M::kPidFieldNumber, e.tid);
                comm(M::kOldcommFieldNumber, e.old_comm);
                comm(M::kNewcommFieldNumber, e.new_comm);
              });
            },
            [&](const model::IrqEntry& e) {
              using M = IrqHandlerEntryFtraceEvent;
              event(Event::kIrqHandlerEntryFieldNumber, [&] {
                w.Int(M::kIrqFieldNumber, e.irq);
                w.Bytes(M::kNameFieldNumber, irq_names.IrqName(e.irq));
              });
            },
            [&](const model::IrqExit& e) {
              using M = IrqHandlerExitFtraceEvent;
              event(Event::kIrqHandlerExitFieldNumber, [&] {
                w.Int(M::kIrqFieldNumber, e.irq);
                w.Int(M::kRetFieldNumber, e.ret);
              });
            },
            [&](const model::SoftirqEntry& e) {
              event(Event::kSoftirqEntryFieldNumber,
                    [&] { w.Varint(SoftirqEntryFtraceEvent::kVecFieldNumber, e.vec); });
            },
            [&](const model::SoftirqExit& e) {
              event(Event::kSoftirqExitFieldNumber,
                    [&] { w.Varint(SoftirqExitFtraceEvent::kVecFieldNumber, e.vec); });
            },
            [&](const model::SoftirqRaise& e) {
              event(Event::kSoftirqRaiseFieldNumber,
                    [&] { w.Varint(SoftirqRaiseFtraceEvent::kVecFieldNumber, e.vec); });
            },
            [&](const model::VectorEntry& e) {
              if (e.kind == model::VectorKind::kLocalTimer)
                event(Event::kLocalTimerEntryFieldNumber,
                      [&] { w.Int(LocalTimerEntryFtraceEvent::kVectorFieldNumber, e.vector); });
            },
            [&](const model::VectorExit& e) {
              if (e.kind == model::VectorKind::kLocalTimer)
                event(Event::kLocalTimerExitFieldNumber,
                      [&] { w.Int(LocalTimerExitFtraceEvent::kVectorFieldNumber, e.vector); });
            },
            [&](const model::NapiPoll& e) {
              // Perfetto has no napi_poll message: generic, fields as the
              // tracepoint names them.
              event(Event::kGenericFieldNumber, [&] {
                w.Bytes(Generic::kEventNameFieldNumber, "napi_poll");
                GenericStr(w, "dev_name", e.dev.name.view());
                GenericInt(w, "work", e.work);
                GenericInt(w, "budget", e.budget);
                GenericUint(w, "napi_id", e.napi_id);
                GenericInt(w, "queue", e.queue);
              });
            },
            [&](const model::NetReceive& e) {
              using M = NetifReceiveSkbFtraceEvent;
              event(Event::kNetifReceiveSkbFieldNumber, [&] {
                w.Varint(M::kLenFieldNumber, static_cast<uint32_t>(e.len));
                w.Bytes(M::kNameFieldNumber, e.dev.name.view());
                w.Varint(M::kSkbaddrFieldNumber, e.skbaddr);
              });
            },
            [&](const model::NetTransmit& e) {
              using M = NetDevXmitFtraceEvent;
              event(Event::kNetDevXmitFieldNumber, [&] {
                w.Varint(M::kLenFieldNumber, static_cast<uint32_t>(e.len));
                w.Bytes(M::kNameFieldNumber, e.dev.name.view());
                w.Int(M::kRcFieldNumber, e.rc);
                w.Varint(M::kSkbaddrFieldNumber, e.skbaddr);
              });
            },
            [&](const model::NetTxTimeout& e) {
              event(Event::kGenericFieldNumber, [&] {
                w.Bytes(Generic::kEventNameFieldNumber, "net_dev_xmit_timeout");
                GenericStr(w, "name", e.dev.name.view());
                GenericStr(w, "driver", e.driver.view());
                GenericInt(w, "queue_index", e.queue);
              });
            },
            [&](const model::DqlStall& e) {
              event(Event::kGenericFieldNumber, [&] {
                w.Bytes(Generic::kEventNameFieldNumber, "dql_stall_detected");
                GenericUint(w, "thrs", e.thrs);
                GenericUint(w, "len", e.len);
                GenericUint(w, "last_reap", e.last_reap);
                GenericUint(w, "hist_head", e.hist_head);
                GenericUint(w, "now", e.now);
                for (size_t i = 0; i < e.hist.size(); ++i) GenericUint(w, "hist" + std::to_string(i), e.hist[i]);
              });
            },
            [&](const model::TcpRetransmit& e) {
              using M = TcpRetransmitSkbFtraceEvent;
              event(Event::kTcpRetransmitSkbFieldNumber, [&] {
                w.Varint(M::kDaddrFieldNumber, Ipv4Word(e.daddr));
                w.Varint(M::kDportFieldNumber, static_cast<uint32_t>(e.dport));
                w.Varint(M::kSaddrFieldNumber, Ipv4Word(e.saddr));
                w.Varint(M::kSkaddrFieldNumber, e.skaddr);
                w.Varint(M::kSkbaddrFieldNumber, e.skbaddr);
                w.Varint(M::kSportFieldNumber, static_cast<uint32_t>(e.sport));
                w.Int(M::kStateFieldNumber, e.state);
              });
            },
            [&](const model::GroReceiveEntry& e) {
              using M = NapiGroReceiveEntryFtraceEvent;
              event(Event::kNapiGroReceiveEntryFieldNumber, [&] {
                w.Varint(M::kDataLenFieldNumber, static_cast<uint32_t>(e.data_len));
                w.Varint(M::kLenFieldNumber, static_cast<uint32_t>(e.len));
                w.Bytes(M::kNameFieldNumber, e.dev.name.view());
                w.Varint(M::kNapiIdFieldNumber, static_cast<uint32_t>(e.napi_id));
                w.Varint(M::kQueueMappingFieldNumber, static_cast<uint32_t>(e.queue_mapping));
                w.Varint(M::kSkbaddrFieldNumber, e.skbaddr);
              });
            },
            [&](const model::GroReceiveExit& e) {
              event(Event::kNapiGroReceiveExitFieldNumber,
                    [&] { w.Int(NapiGroReceiveExitFtraceEvent::kRetFieldNumber, e.ret); });
            },
            [&](const model::SkbDrop& e) {
              // Perfetto's kfree_skb has no reason field; reasons are in the
              // per-device drop counters (export/perfetto/net_tracks.h).
              using M = KfreeSkbFtraceEvent;
              event(Event::kKfreeSkbFieldNumber, [&] {
                w.Varint(M::kLocationFieldNumber, e.location);
                w.Varint(M::kProtocolFieldNumber, static_cast<uint32_t>(e.protocol));
                w.Varint(M::kSkbaddrFieldNumber, e.skbaddr);
              });
            },
            [&](const model::NicEvent& e) {
              std::string_view full = e.event < nic_event_names_.size()
                                          ? std::string_view(nic_event_names_[e.event])
                                          : std::string_view("nic/unknown");
              auto slash = full.find('/');
              std::string_view name = slash == full.npos ? full : full.substr(slash + 1);
              std::string_view category = slash == full.npos ? "" : full.substr(0, slash);
              event(Event::kGenericFieldNumber, [&] {
                w.Bytes(Generic::kEventNameFieldNumber, name);
                GenericStr(w, "category", category);
                GenericStr(w, "dev", e.dev.view());
              });
            },
        },
        ev.payload);
  }
  if (!compact_.empty())
    Message(w, FtraceEventBundle::kCompactSchedFieldNumber, [&] { compact_.FlushTo(w); });
  w.EndMessage(bundle_token);
}

void FtraceBundleEncoder::Encode(const BundleInfo& info, std::span<const model::Event> events,
                                 IrqNameSource& irq_names, TracePacket* packet) {
  std::string bytes;
  EncodePacket(info, events, irq_names, &bytes);
  packet->MergeFromString(bytes);
}

}  // namespace gpunoise::perfetto
