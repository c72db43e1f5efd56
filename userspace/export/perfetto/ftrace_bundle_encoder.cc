#include "export/perfetto/ftrace_bundle_encoder.h"

#include <cstring>
#include <type_traits>

#include "common/proto_wire.h"
#include "export/perfetto/protos/perfetto_fields.h"

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

// Field numbers come from the table generated from the subset (perfetto_fields.h).
using Event = pf::FtraceEvent;
using Generic = pf::GenericFtraceEvent;
using GenericField = pf::GenericFtraceEvent::Field;

void GenericStr(ProtoWriter& w, std::string_view name, std::string_view value) {
  Message(w, Generic::kField, [&] {
    w.Bytes(GenericField::kName, name);
    w.Bytes(GenericField::kStrValue, value);
  });
}
void GenericInt(ProtoWriter& w, std::string_view name, int64_t value) {
  Message(w, Generic::kField, [&] {
    w.Bytes(GenericField::kName, name);
    w.Int(GenericField::kIntValue, value);
  });
}
void GenericUint(ProtoWriter& w, std::string_view name, uint64_t value) {
  Message(w, Generic::kField, [&] {
    w.Bytes(GenericField::kName, name);
    w.Varint(GenericField::kUintValue, value);
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

void FtraceBundleEncoder::EncodePacket(const BundleInfo& info, model::EventView events,
                                       IrqNameSource& irq_names, std::string* packet) {
  ProtoWriter w(packet);
  size_t bundle_token = w.BeginMessage(pf::TracePacket::kFtraceEvents);
  w.Varint(pf::FtraceEventBundle::kCpu, info.cpu);
  if (info.lost_events) w.Bool(pf::FtraceEventBundle::kLostEvents, true);
  if (info.previous_bundle_end_timestamp)
    w.Varint(pf::FtraceEventBundle::kPreviousBundleEndTimestamp, info.previous_bundle_end_timestamp);

  // Runs of events of numbers only (the irq, softirq and local-timer events
  // a NET_RX storm is made of) are written whole into this buffer through
  // FixedProtoWriter (proto_wire.h) and reach the packet a few KiB at a time:
  // a string append per event (a capacity check and a call to memcpy) was
  // most of the encoder's time. Anything else written into the packet moves
  // what is gathered there first.
  char run[4096];
  size_t run_used = 0;
  auto flush_run = [&] {
    if (!run_used) return;
    packet->append(run, run_used);
    run_used = 0;
  };
  for (const model::Event& ev : events) {
    // One FtraceEvent: timestamp, pid (the task current when it fired) and
    // the event's own message as field `kind`, written by `fields`.
    auto event = [&](uint32_t kind, auto&& fields) {
      flush_run();
      Message(w, pf::FtraceEventBundle::kEvent, [&] {
        w.Varint(Event::kTimestamp, ev.ts);
        w.Varint(Event::kPid, static_cast<uint32_t>(ev.tid));
        if (ev.common_flags) w.Varint(Event::kCommonFlags, ev.common_flags);
        Message(w, kind, fields);
      });
    };
    // The same for an event whose own fields are numbers, at most 1 + 1 + 11
    // + 6 + 4 + 3 + 1 bytes around two int fields (22).
    constexpr size_t kNumericEventMax = 64;
    auto numeric_event_at = [&](uint64_t ts, uint32_t kind, auto&& fields) {
      if (run_used + kNumericEventMax > sizeof(run)) flush_run();
      FixedProtoWriter f(run + run_used);
      char* outer = f.BeginMessage(pf::FtraceEventBundle::kEvent);
      f.Varint(Event::kTimestamp, ts);
      f.Varint(Event::kPid, static_cast<uint32_t>(ev.tid));
      if (ev.common_flags) f.Varint(Event::kCommonFlags, ev.common_flags);
      char* inner = f.BeginMessage(kind);
      fields(f);
      f.EndMessage(inner);
      f.EndMessage(outer);
      run_used += f.size();
    };
    auto numeric_event = [&](uint32_t kind, auto&& fields) { numeric_event_at(ev.ts, kind, fields); };
    auto comm = [&](uint32_t field, const model::TaskComm& c) { w.Bytes(field, c.view()); };
    std::visit(
        Overloaded{
            [&](const model::SchedSwitch& e) { compact_.AddSwitch(ev.ts, e); },
            [&](const model::SchedWaking& e) {
              if (!e.is_new_task) {
                compact_.AddWaking(ev.ts, e, ev.common_flags);
                return;
              }
              using M = pf::SchedWakeupNewFtraceEvent;
              event(Event::kSchedWakeupNew, [&] {
                comm(M::kComm, e.comm);
                w.Int(M::kPid, e.tid);
                w.Int(M::kPrio, e.prio);
                w.Int(M::kSuccess, 1);
                w.Int(M::kTargetCpu, e.target_cpu);
              });
            },
            [&](const model::SchedMigrate& e) {
              using M = pf::SchedMigrateTaskFtraceEvent;
              event(Event::kSchedMigrateTask, [&] {
                comm(M::kComm, e.comm);
                w.Int(M::kPid, e.tid);
                w.Int(M::kPrio, e.prio);
                w.Int(M::kOrigCpu, e.orig_cpu);
                w.Int(M::kDestCpu, e.dest_cpu);
              });
            },
            [&](const model::ProcessFork& e) {
              // task_newtask is what the trace processor uses to bind a new
              // thread to its process (clone flags) and to name it.
              using M = pf::TaskNewtaskFtraceEvent;
              event(Event::kTaskNewtask, [&] {
                w.Int(M::kPid, e.child_tid);
                comm(M::kComm, e.child_comm);
                w.Varint(M::kCloneFlags, e.is_thread ? kCloneThread : 0);
              });
            },
            [&](const model::ProcessExec& e) {
              using M = pf::SchedProcessExecFtraceEvent;
              event(Event::kSchedProcessExec, [&] {
                w.Bytes(M::kFilename, e.filename.view());
                w.Int(M::kPid, e.tid);
                w.Int(M::kOldPid, e.old_tid);
              });
            },
            [&](const model::ProcessExit& e) {
              using M = pf::SchedProcessExitFtraceEvent;
              event(Event::kSchedProcessExit, [&] {
                comm(M::kComm, e.comm);
                w.Int(M::kPid, e.tid);
                w.Int(M::kTgid, e.tgid);
                w.Int(M::kPrio, e.prio);
              });
            },
            [&](const model::TaskRename& e) {
              using M = pf::TaskRenameFtraceEvent;
              event(Event::kTaskRename, [&] {
                w.Int(M::kPid, e.tid);
                comm(M::kOldcomm, e.old_comm);
                comm(M::kNewcomm, e.new_comm);
              });
            },
            [&](const model::IrqEntry& e) {
              using M = pf::IrqHandlerEntryFtraceEvent;
              event(Event::kIrqHandlerEntry, [&] {
                w.Int(M::kIrq, e.irq);
                w.Bytes(M::kName, irq_names.IrqName(e.irq));
              });
            },
            [&](const model::IrqExit& e) {
              using M = pf::IrqHandlerExitFtraceEvent;
              numeric_event(Event::kIrqHandlerExit, [&](FixedProtoWriter& f) {
                f.Int(M::kIrq, e.irq);
                f.Int(M::kRet, e.ret);
              });
            },
            [&](const model::SoftirqEntry& e) {
              // The raise the recorder folded into this entry goes back out
              // as the ftrace event it stands for, at its own time: the
              // trace processor sorts a bundle's events. Its thread and
              // context flags are the entry's (the recorder keeps only the
              // raise's time).
              if (e.raise_wait_ns != 0 && e.raise_wait_ns <= ev.ts)
                numeric_event_at(ev.ts - e.raise_wait_ns, Event::kSoftirqRaise, [&](FixedProtoWriter& f) {
                  f.Varint(pf::SoftirqRaiseFtraceEvent::kVec, e.vec);
                });
              numeric_event(Event::kSoftirqEntry,
                            [&](FixedProtoWriter& f) { f.Varint(pf::SoftirqEntryFtraceEvent::kVec, e.vec); });
            },
            [&](const model::SoftirqExit& e) {
              numeric_event(Event::kSoftirqExit,
                            [&](FixedProtoWriter& f) { f.Varint(pf::SoftirqExitFtraceEvent::kVec, e.vec); });
            },
            [&](const model::SoftirqRaise& e) {
              numeric_event(Event::kSoftirqRaise,
                            [&](FixedProtoWriter& f) { f.Varint(pf::SoftirqRaiseFtraceEvent::kVec, e.vec); });
            },
            [&](const model::VectorEntry& e) {
              if (e.kind == model::VectorKind::kLocalTimer)
                numeric_event(Event::kLocalTimerEntry, [&](FixedProtoWriter& f) {
                  f.Int(pf::LocalTimerEntryFtraceEvent::kVector, e.vector);
                });
            },
            [&](const model::VectorExit& e) {
              if (e.kind == model::VectorKind::kLocalTimer)
                numeric_event(Event::kLocalTimerExit, [&](FixedProtoWriter& f) {
                  f.Int(pf::LocalTimerExitFtraceEvent::kVector, e.vector);
                });
            },
            [&](const model::GroReceiveExit& e) {
              numeric_event(Event::kNapiGroReceiveExit,
                            [&](FixedProtoWriter& f) { f.Int(pf::NapiGroReceiveExitFtraceEvent::kRet, e.ret); });
            },
            [&](const model::NapiPoll& e) {
              // Perfetto has no napi_poll message: generic, fields as the
              // tracepoint names them.
              event(Event::kGeneric, [&] {
                w.Bytes(Generic::kEventName, "napi_poll");
                GenericStr(w, "dev_name", e.dev.name.view());
                GenericInt(w, "work", e.work);
                GenericInt(w, "budget", e.budget);
                GenericUint(w, "napi_id", e.napi_id);
                GenericInt(w, "queue", e.queue);
              });
            },
            [&](const model::NetReceive& e) {
              using M = pf::NetifReceiveSkbFtraceEvent;
              event(Event::kNetifReceiveSkb, [&] {
                w.Varint(M::kLen, static_cast<uint32_t>(e.len));
                w.Bytes(M::kName, e.dev.name.view());
                w.Varint(M::kSkbaddr, e.skbaddr);
              });
            },
            [&](const model::NetTransmit& e) {
              using M = pf::NetDevXmitFtraceEvent;
              event(Event::kNetDevXmit, [&] {
                w.Varint(M::kLen, static_cast<uint32_t>(e.len));
                w.Bytes(M::kName, e.dev.name.view());
                w.Int(M::kRc, e.rc);
                w.Varint(M::kSkbaddr, e.skbaddr);
              });
            },
            [&](const model::NetTxTimeout& e) {
              event(Event::kGeneric, [&] {
                w.Bytes(Generic::kEventName, "net_dev_xmit_timeout");
                GenericStr(w, "name", e.dev.name.view());
                GenericStr(w, "driver", e.driver.view());
                GenericInt(w, "queue_index", e.queue);
              });
            },
            [&](const model::DqlStall& e) {
              event(Event::kGeneric, [&] {
                w.Bytes(Generic::kEventName, "dql_stall_detected");
                GenericUint(w, "thrs", e.thrs);
                GenericUint(w, "len", e.len);
                GenericUint(w, "last_reap", e.last_reap);
                GenericUint(w, "hist_head", e.hist_head);
                GenericUint(w, "now", e.now);
                for (size_t i = 0; i < e.hist.size(); ++i) GenericUint(w, "hist" + std::to_string(i), e.hist[i]);
              });
            },
            [&](const model::TcpRetransmit& e) {
              using M = pf::TcpRetransmitSkbFtraceEvent;
              event(Event::kTcpRetransmitSkb, [&] {
                w.Varint(M::kDaddr, Ipv4Word(e.daddr));
                w.Varint(M::kDport, static_cast<uint32_t>(e.dport));
                w.Varint(M::kSaddr, Ipv4Word(e.saddr));
                w.Varint(M::kSkaddr, e.skaddr);
                w.Varint(M::kSkbaddr, e.skbaddr);
                w.Varint(M::kSport, static_cast<uint32_t>(e.sport));
                w.Int(M::kState, e.state);
              });
            },
            [&](const model::GroReceiveEntry& e) {
              using M = pf::NapiGroReceiveEntryFtraceEvent;
              event(Event::kNapiGroReceiveEntry, [&] {
                w.Varint(M::kDataLen, static_cast<uint32_t>(e.data_len));
                w.Varint(M::kLen, static_cast<uint32_t>(e.len));
                w.Bytes(M::kName, e.dev.name.view());
                w.Varint(M::kNapiId, static_cast<uint32_t>(e.napi_id));
                w.Varint(M::kQueueMapping, static_cast<uint32_t>(e.queue_mapping));
                w.Varint(M::kSkbaddr, e.skbaddr);
              });
            },
            [&](const model::SkbDrop& e) {
              // Perfetto's kfree_skb has no reason field; reasons are in the
              // per-device drop counters (export/perfetto/net_tracks.h).
              using M = pf::KfreeSkbFtraceEvent;
              event(Event::kKfreeSkb, [&] {
                w.Varint(M::kLocation, e.location);
                w.Varint(M::kProtocol, static_cast<uint32_t>(e.protocol));
                w.Varint(M::kSkbaddr, e.skbaddr);
              });
            },
            [&](const model::NicEvent& e) {
              std::string_view full = e.event < nic_event_names_.size()
                                          ? std::string_view(nic_event_names_[e.event])
                                          : std::string_view("nic/unknown");
              auto slash = full.find('/');
              std::string_view name = slash == full.npos ? full : full.substr(slash + 1);
              std::string_view category = slash == full.npos ? "" : full.substr(0, slash);
              event(Event::kGeneric, [&] {
                w.Bytes(Generic::kEventName, name);
                GenericStr(w, "category", category);
                GenericStr(w, "dev", e.dev.view());
              });
            },
        },
        ev.payload);
  }
  flush_run();
  if (!compact_.empty())
    Message(w, pf::FtraceEventBundle::kCompactSched, [&] { compact_.FlushTo(w); });
  w.EndMessage(bundle_token);
}

}  // namespace gpunoise::perfetto
