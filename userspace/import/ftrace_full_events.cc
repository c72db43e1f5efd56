// FtraceBundleReader's full (not compact) events: one FtraceEvent message
// each, Perfetto's typed ones and GenericFtraceEvent for the rest.
#include <string>

#include <fmt/format.h>

#include "import/ftrace_bundle_reader.h"
#include "export/perfetto/protos/perfetto_fields.h"

namespace gpunoise::import {
namespace {


constexpr uint64_t kCloneThread = 0x00010000;  // include/uapi/linux/sched.h

model::TaskComm Comm(std::string_view s) { return model::TaskComm(s); }

// The fields of one generic ftrace event, by name.
struct GenericFields {
  struct Value {
    std::string_view name;
    std::string_view str;
    int64_t num = 0;
    bool is_str = false;
  };
  static constexpr size_t kMax = 16;
  Value values[kMax];
  size_t count = 0;

  const Value* Find(std::string_view name) const {
    for (size_t i = 0; i < count; ++i)
      if (values[i].name == name) return &values[i];
    return nullptr;
  }
  std::string_view Str(std::initializer_list<std::string_view> names) const {
    for (auto n : names)
      if (const Value* v = Find(n); v && v->is_str) return v->str;
    return {};
  }
  bool Num(std::initializer_list<std::string_view> names, int64_t* out) const {
    for (auto n : names)
      if (const Value* v = Find(n); v && !v->is_str) {
        *out = v->num;
        return true;
      }
    return false;
  }
};


}  // namespace

bool FtraceBundleReader::EmitFullEvent(uint32_t cpu, const FullEvent& fe, PacketError* error) {
  CpuState& state = Cpu(cpu);
  const uint64_t ts = fe.ts + static_cast<uint64_t>(state.clock_offset);
  int32_t common_pid = 0;
  uint16_t common_flags = 0;
  ProtoField payload;
  bool has_payload = false;
  ProtoReader r(fe.data, fe.size);
  ProtoField field;
  while (r.Next(&field)) {
    if (field.id == pf::FtraceEvent::kPid) {
      common_pid = field.as_int32();
    } else if (field.id == pf::FtraceEvent::kCommonFlags && field.type == WireType::kVarint) {
      common_flags = static_cast<uint16_t>(field.int_value);
    } else if (field.id > pf::FtraceEvent::kPid && field.type == WireType::kLengthDelimited) {
      payload = field;
      has_payload = true;
    }
  }
  if (r.error()) {
    *error = {static_cast<size_t>(fe.data - bundle_begin_) + r.error_offset(),
              "FtraceEvent is malformed"};
    return false;
  }
  if (!has_payload) {
    ++stats_.unknown_events;
    return true;
  }

  model::Event& ev = other_event_;
  ev.ts = ts;
  ev.cpu = cpu;
  ev.tid = common_pid;
  ev.common_flags = common_flags;
  ProtoReader pr(payload);
  ProtoField pfield;
  auto fail = [&]() {
    *error = {static_cast<size_t>(payload.data - bundle_begin_) + pr.error_offset(),
              fmt::format("ftrace event {} is malformed", payload.id)};
    return false;
  };

  switch (payload.id) {
    case pf::FtraceEvent::kSchedSwitch: {
      model::SchedSwitch s;
      while (pr.Next(&pfield)) {
        switch (pfield.id) {
          case pf::SchedSwitchFtraceEvent::kPrevPid: s.prev_tid = pfield.as_int32(); break;
          case pf::SchedSwitchFtraceEvent::kPrevState: s.prev_state = pfield.as_int64(); break;
          case pf::SchedSwitchFtraceEvent::kNextComm: s.next_comm = Comm(pfield.as_string()); break;
          case pf::SchedSwitchFtraceEvent::kNextPid: s.next_tid = pfield.as_int32(); break;
          case pf::SchedSwitchFtraceEvent::kNextPrio: s.next_prio = pfield.as_int32(); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      if (state.current_tid >= 0 && state.current_tid != s.prev_tid) ++stats_.unseen_switches;
      state.current_tid = s.next_tid;
      ev.tid = s.prev_tid;
      ev.payload = s;
      break;
    }
    case pf::FtraceEvent::kSchedWaking:
    case pf::FtraceEvent::kSchedWakeup:
    case pf::FtraceEvent::kSchedWakeupNew: {
      // The three share one layout; read with SchedWaking's numbers.
      static_assert(pf::SchedWakeupFtraceEvent::kTargetCpu == pf::SchedWakingFtraceEvent::kTargetCpu &&
                    pf::SchedWakeupNewFtraceEvent::kTargetCpu == pf::SchedWakingFtraceEvent::kTargetCpu &&
                    pf::SchedWakeupFtraceEvent::kPrio == pf::SchedWakingFtraceEvent::kPrio &&
                    pf::SchedWakeupNewFtraceEvent::kPrio == pf::SchedWakingFtraceEvent::kPrio &&
                    pf::SchedWakeupFtraceEvent::kPid == pf::SchedWakingFtraceEvent::kPid &&
                    pf::SchedWakeupNewFtraceEvent::kPid == pf::SchedWakingFtraceEvent::kPid &&
                    pf::SchedWakeupFtraceEvent::kComm == pf::SchedWakingFtraceEvent::kComm &&
                    pf::SchedWakeupNewFtraceEvent::kComm == pf::SchedWakingFtraceEvent::kComm);
      model::SchedWaking w;
      w.is_new_task = payload.id == pf::FtraceEvent::kSchedWakeupNew;
      while (pr.Next(&pfield)) {
        switch (pfield.id) {
          case pf::SchedWakingFtraceEvent::kComm: w.comm = Comm(pfield.as_string()); break;
          case pf::SchedWakingFtraceEvent::kPid: w.tid = pfield.as_int32(); break;
          case pf::SchedWakingFtraceEvent::kPrio: w.prio = pfield.as_int32(); break;
          case pf::SchedWakingFtraceEvent::kTargetCpu: w.target_cpu = pfield.as_int32(); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      ev.payload = w;
      break;
    }
    case pf::FtraceEvent::kSchedMigrateTask: {
      model::SchedMigrate m;
      while (pr.Next(&pfield)) {
        switch (pfield.id) {
          case pf::SchedMigrateTaskFtraceEvent::kComm: m.comm = Comm(pfield.as_string()); break;
          case pf::SchedMigrateTaskFtraceEvent::kPid: m.tid = pfield.as_int32(); break;
          case pf::SchedMigrateTaskFtraceEvent::kPrio: m.prio = pfield.as_int32(); break;
          case pf::SchedMigrateTaskFtraceEvent::kOrigCpu: m.orig_cpu = pfield.as_int32(); break;
          case pf::SchedMigrateTaskFtraceEvent::kDestCpu: m.dest_cpu = pfield.as_int32(); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      ev.payload = m;
      break;
    }
    case pf::FtraceEvent::kTaskNewtask: {
      // task_newtask fires in the parent: common_pid is the parent thread.
      model::ProcessFork fork;
      fork.parent_tid = common_pid;
      uint64_t clone_flags = 0;
      while (pr.Next(&pfield)) {
        switch (pfield.id) {
          case pf::TaskNewtaskFtraceEvent::kPid: fork.child_tid = pfield.as_int32(); break;
          case pf::TaskNewtaskFtraceEvent::kComm: fork.child_comm = Comm(pfield.as_string()); break;
          case pf::TaskNewtaskFtraceEvent::kCloneFlags: clone_flags = pfield.int_value; break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      fork.is_thread = (clone_flags & kCloneThread) != 0;
      fork.child_tgid = fork.is_thread ? 0 : fork.child_tid;
      ev.payload = fork;
      break;
    }
    case pf::FtraceEvent::kSchedProcessFork: {
      model::ProcessFork fork;
      while (pr.Next(&pfield)) {
        switch (pfield.id) {
          case pf::SchedProcessForkFtraceEvent::kParentComm: fork.parent_comm = Comm(pfield.as_string()); break;
          case pf::SchedProcessForkFtraceEvent::kParentPid: fork.parent_tid = pfield.as_int32(); break;
          case pf::SchedProcessForkFtraceEvent::kChildComm: fork.child_comm = Comm(pfield.as_string()); break;
          case pf::SchedProcessForkFtraceEvent::kChildPid: fork.child_tid = pfield.as_int32(); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      // sched_process_fork says nothing of CLONE_THREAD; task_newtask does,
      // so a fork is only a new process when that is all there is.
      fork.child_tgid = fork.child_tid;
      ev.payload = fork;
      break;
    }
    case pf::FtraceEvent::kSchedProcessExec: {
      model::ProcessExec x;
      while (pr.Next(&pfield)) {
        switch (pfield.id) {
          case pf::SchedProcessExecFtraceEvent::kFilename: x.filename = model::ExecPath(std::string_view(pfield.as_string())); break;
          case pf::SchedProcessExecFtraceEvent::kPid: x.tid = pfield.as_int32(); break;
          case pf::SchedProcessExecFtraceEvent::kOldPid: x.old_tid = pfield.as_int32(); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      ev.payload = std::move(x);
      break;
    }
    case pf::FtraceEvent::kSchedProcessExit: {
      model::ProcessExit x;
      while (pr.Next(&pfield)) {
        switch (pfield.id) {
          case pf::SchedProcessExitFtraceEvent::kComm: x.comm = Comm(pfield.as_string()); break;
          case pf::SchedProcessExitFtraceEvent::kPid: x.tid = pfield.as_int32(); break;
          case pf::SchedProcessExitFtraceEvent::kTgid: x.tgid = pfield.as_int32(); break;
          case pf::SchedProcessExitFtraceEvent::kPrio: x.prio = pfield.as_int32(); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      ev.payload = x;
      break;
    }
    case pf::FtraceEvent::kTaskRename: {
      model::TaskRename x;
      while (pr.Next(&pfield)) {
        switch (pfield.id) {
          case pf::TaskRenameFtraceEvent::kPid: x.tid = pfield.as_int32(); break;
          case pf::TaskRenameFtraceEvent::kOldcomm: x.old_comm = Comm(pfield.as_string()); break;
          case pf::TaskRenameFtraceEvent::kNewcomm: x.new_comm = Comm(pfield.as_string()); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      ev.payload = x;
      break;
    }
    // The most frequent full-format events reuse an event whose payload
    // already holds their type.
    case pf::FtraceEvent::kIrqHandlerEntry: {
      int32_t irq = 0;
      std::string_view name;
      while (pr.Next(&pfield)) {
        if (pfield.id == pf::IrqHandlerEntryFtraceEvent::kIrq) irq = pfield.as_int32();
        if (pfield.id == pf::IrqHandlerEntryFtraceEvent::kName) name = pfield.as_string();
      }
      if (pr.error()) return fail();
      // Full-format irq events carry the handler's name: the trace names its
      // own IRQs even without an interrupt_info packet.
      if (!name.empty() && (irq >= static_cast<int32_t>(named_irqs_.size()) || !named_irqs_[irq])) {
        sink_.OnIrqName(irq, name);
        if (irq >= 0 && irq < 65536) {
          if (named_irqs_.size() <= static_cast<size_t>(irq)) named_irqs_.resize(irq + 1, false);
          named_irqs_[irq] = true;
        }
      }
      std::get_if<model::IrqEntry>(&irq_entry_event_.payload)->irq = irq;
      return EmitCached(irq_entry_event_, ts, cpu, common_pid);
    }
    case pf::FtraceEvent::kIrqHandlerExit: {
      auto* x = std::get_if<model::IrqExit>(&irq_exit_event_.payload);
      *x = {};
      while (pr.Next(&pfield)) {
        if (pfield.id == pf::IrqHandlerExitFtraceEvent::kIrq) x->irq = pfield.as_int32();
        if (pfield.id == pf::IrqHandlerExitFtraceEvent::kRet) x->ret = pfield.as_int32();
      }
      if (pr.error()) return fail();
      return EmitCached(irq_exit_event_, ts, cpu, common_pid);
    }
    case pf::FtraceEvent::kSoftirqEntry:
    case pf::FtraceEvent::kSoftirqExit:
    case pf::FtraceEvent::kSoftirqRaise: {
      static_assert(pf::SoftirqExitFtraceEvent::kVec == pf::SoftirqEntryFtraceEvent::kVec &&
                    pf::SoftirqRaiseFtraceEvent::kVec == pf::SoftirqEntryFtraceEvent::kVec);
      uint32_t vec = 0;
      while (pr.Next(&pfield))
        if (pfield.id == pf::SoftirqEntryFtraceEvent::kVec) vec = pfield.as_uint32();
      if (pr.error()) return fail();
      if (payload.id == pf::FtraceEvent::kSoftirqEntry) {
        std::get_if<model::SoftirqEntry>(&softirq_entry_event_.payload)->vec = vec;
        return EmitCached(softirq_entry_event_, ts, cpu, common_pid);
      }
      if (payload.id == pf::FtraceEvent::kSoftirqExit) {
        std::get_if<model::SoftirqExit>(&softirq_exit_event_.payload)->vec = vec;
        return EmitCached(softirq_exit_event_, ts, cpu, common_pid);
      }
      ev.payload = model::SoftirqRaise{vec};
      break;
    }
    case pf::FtraceEvent::kLocalTimerEntry:
    case pf::FtraceEvent::kLocalTimerExit: {
      static_assert(pf::LocalTimerExitFtraceEvent::kVector == pf::LocalTimerEntryFtraceEvent::kVector);
      int32_t vector = 0;
      while (pr.Next(&pfield))
        if (pfield.id == pf::LocalTimerEntryFtraceEvent::kVector) vector = pfield.as_int32();
      if (pr.error()) return fail();
      if (payload.id == pf::FtraceEvent::kLocalTimerEntry)
        ev.payload = model::VectorEntry{model::VectorKind::kLocalTimer, vector};
      else
        ev.payload = model::VectorExit{model::VectorKind::kLocalTimer, vector};
      break;
    }
    case pf::FtraceEvent::kIpiEntry:
    case pf::FtraceEvent::kIpiExit: {
      static_assert(pf::IpiExitFtraceEvent::kReason == pf::IpiEntryFtraceEvent::kReason);
      // ipi_entry's reason is the kernel's text ("Rescheduling interrupts",
      // "Function call interrupts", ...).
      std::string_view reason;
      while (pr.Next(&pfield))
        if (pfield.id == pf::IpiEntryFtraceEvent::kReason) reason = pfield.as_string();
      if (pr.error()) return fail();
      model::VectorKind kind = model::VectorKind::kPlatformIpi;
      if (reason.find("Resched") != std::string_view::npos) kind = model::VectorKind::kReschedule;
      else if (reason.find("single") != std::string_view::npos) kind = model::VectorKind::kCallFunctionSingle;
      else if (reason.find("Function") != std::string_view::npos) kind = model::VectorKind::kCallFunction;
      else if (reason.find("work") != std::string_view::npos) kind = model::VectorKind::kIrqWork;
      if (payload.id == pf::FtraceEvent::kIpiEntry) ev.payload = model::VectorEntry{kind, 0};
      else ev.payload = model::VectorExit{kind, 0};
      break;
    }
    case pf::FtraceEvent::kNetifReceiveSkb:
    case pf::FtraceEvent::kNapiGroReceiveEntry:
    case pf::FtraceEvent::kNetDevXmit:
    case pf::FtraceEvent::kKfreeSkb:
    case pf::FtraceEvent::kTcpRetransmitSkb: {
      model::NetTraceEvent n;
      n.ts = ts;
      n.cpu = cpu;
      n.tid = common_pid;
      switch (payload.id) {
        case pf::FtraceEvent::kNetifReceiveSkb: n.kind = model::NetTraceKind::kRxPacket; break;
        case pf::FtraceEvent::kNapiGroReceiveEntry: n.kind = model::NetTraceKind::kRxPacket; break;
        case pf::FtraceEvent::kNetDevXmit: n.kind = model::NetTraceKind::kTxPacket; break;
        case pf::FtraceEvent::kKfreeSkb: n.kind = model::NetTraceKind::kDrop; break;
        default: n.kind = model::NetTraceKind::kRetransmit; break;
      }
      while (pr.Next(&pfield)) {
        if (payload.id == pf::FtraceEvent::kNetifReceiveSkb) {
          if (pfield.id == pf::NetifReceiveSkbFtraceEvent::kName) n.device = pfield.as_string();
          if (pfield.id == pf::NetifReceiveSkbFtraceEvent::kLen) n.value = pfield.as_int64();
        } else if (payload.id == pf::FtraceEvent::kNapiGroReceiveEntry) {
          if (pfield.id == pf::NapiGroReceiveEntryFtraceEvent::kName) n.device = pfield.as_string();
          if (pfield.id == pf::NapiGroReceiveEntryFtraceEvent::kLen) n.value = pfield.as_int64();
          if (pfield.id == pf::NapiGroReceiveEntryFtraceEvent::kQueueMapping) n.queue = pfield.as_int32();
        } else if (payload.id == pf::FtraceEvent::kNetDevXmit) {
          if (pfield.id == pf::NetDevXmitFtraceEvent::kName) n.device = pfield.as_string();
          if (pfield.id == pf::NetDevXmitFtraceEvent::kLen) n.value = pfield.as_int64();
          if (pfield.id == pf::NetDevXmitFtraceEvent::kRc) n.budget = pfield.as_int32();
        }
      }
      if (pr.error()) return fail();
      EmitNet(n);
      return true;
    }
    case pf::FtraceEvent::kGeneric:
      DecodeGeneric(cpu, ts, common_pid, payload);
      return true;
    default:
      ++stats_.unknown_events;
      return true;
  }
  Emit(ev);
  return true;
}

// Tracepoints Perfetto has no message for arrive as GenericFtraceEvent: the
// event's name and its fields by name, as in the tracefs format file.
void FtraceBundleReader::DecodeGeneric(uint32_t cpu, uint64_t ts, int32_t tid,
                                       const ProtoField& payload) {
  std::string_view name;
  GenericFields g;
  ProtoReader r(payload);
  ProtoField field;
  while (r.Next(&field)) {
    if (field.id == pf::GenericFtraceEvent::kEventName) {
      name = field.as_string();
    } else if (field.id == pf::GenericFtraceEvent::kField && field.type == WireType::kLengthDelimited &&
               g.count < GenericFields::kMax) {
      GenericFields::Value v;
      ProtoReader fr(field);
      ProtoField ff;
      while (fr.Next(&ff)) {
        switch (ff.id) {
          case pf::GenericFtraceEvent::Field::kName: v.name = ff.as_string(); break;
          case pf::GenericFtraceEvent::Field::kStrValue: v.str = ff.as_string(); v.is_str = true; break;
          case pf::GenericFtraceEvent::Field::kIntValue:
          case pf::GenericFtraceEvent::Field::kUintValue: v.num = ff.as_int64(); break;
          default: break;
        }
      }
      g.values[g.count++] = v;
    }
  }
  model::NetTraceEvent n;
  n.ts = ts;
  n.cpu = cpu;
  n.tid = tid;
  int64_t num = 0;
  if (name == "napi_poll") {
    n.kind = model::NetTraceKind::kNapiPoll;
    n.device = g.Str({"dev_name", "name"});
    g.Num({"work"}, &n.value);
    g.Num({"budget"}, &n.budget);
    if (g.Num({"queue", "queue_index"}, &num)) n.queue = static_cast<int32_t>(num);
  } else if (name == "net_dev_xmit_timeout") {
    n.kind = model::NetTraceKind::kTxTimeout;
    n.device = g.Str({"name", "dev_name"});
    if (g.Num({"queue_index", "queue"}, &num)) n.queue = static_cast<int32_t>(num);
  } else if (name == "dql_stall_detected") {
    n.kind = model::NetTraceKind::kDqlStall;
    n.device = g.Str({"name", "dev_name"});
    if (g.Num({"queue_index", "queue"}, &num)) n.queue = static_cast<int32_t>(num);
    g.Num({"len"}, &n.value);
  } else if (name == "kfree_skb") {
    n.kind = model::NetTraceKind::kDrop;
    n.reason = g.Str({"reason"});
    if (n.reason.empty() && g.Num({"reason"}, &num)) n.value = num;
    n.device = g.Str({"dev_name", "name"});
  } else if (name == "netif_receive_skb" || name == "netif_receive_skb_entry" ||
             name == "napi_gro_receive_entry" || name == "netif_rx" ||
             name == "napi_gro_frags_entry") {
    n.kind = model::NetTraceKind::kRxPacket;
    n.device = g.Str({"name", "dev_name"});
    g.Num({"len"}, &n.value);
    if (g.Num({"queue_mapping"}, &num)) n.queue = static_cast<int32_t>(num);
  } else if (name == "net_dev_xmit") {
    n.kind = model::NetTraceKind::kTxPacket;
    n.device = g.Str({"name", "dev_name"});
    g.Num({"len"}, &n.value);
    g.Num({"rc"}, &n.budget);
  } else if (name == "tcp_retransmit_skb") {
    n.kind = model::NetTraceKind::kRetransmit;
  } else {
    ++stats_.unknown_events;
    return;
  }
  EmitNet(n);
}

}  // namespace gpunoise::import
