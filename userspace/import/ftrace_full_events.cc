// FtraceBundleReader's full (not compact) events: one FtraceEvent message
// each, Perfetto's typed ones and GenericFtraceEvent for the rest.
#include <string>

#include <fmt/format.h>

#include "import/ftrace_bundle_reader.h"
#include "import/perfetto_fields.h"

namespace gpunoise::import {
namespace {

namespace f = fields;

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
    if (field.id == f::ftrace_event::kPid) {
      common_pid = field.as_int32();
    } else if (field.id == f::ftrace_event::kCommonFlags && field.type == WireType::kVarint) {
      common_flags = static_cast<uint16_t>(field.int_value);
    } else if (field.id > f::ftrace_event::kPid && field.type == WireType::kLengthDelimited) {
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
  ProtoField pf;
  auto fail = [&]() {
    *error = {static_cast<size_t>(payload.data - bundle_begin_) + pr.error_offset(),
              fmt::format("ftrace event {} is malformed", payload.id)};
    return false;
  };

  switch (payload.id) {
    case f::ftrace_event::kSchedSwitch: {
      model::SchedSwitch s;
      while (pr.Next(&pf)) {
        switch (pf.id) {
          case f::sched_switch::kPrevPid: s.prev_tid = pf.as_int32(); break;
          case f::sched_switch::kPrevState: s.prev_state = pf.as_int64(); break;
          case f::sched_switch::kNextComm: s.next_comm = Comm(pf.as_string()); break;
          case f::sched_switch::kNextPid: s.next_tid = pf.as_int32(); break;
          case f::sched_switch::kNextPrio: s.next_prio = pf.as_int32(); break;
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
    case f::ftrace_event::kSchedWaking:
    case f::ftrace_event::kSchedWakeup:
    case f::ftrace_event::kSchedWakeupNew: {
      model::SchedWaking w;
      w.is_new_task = payload.id == f::ftrace_event::kSchedWakeupNew;
      while (pr.Next(&pf)) {
        switch (pf.id) {
          case f::sched_wake::kComm: w.comm = Comm(pf.as_string()); break;
          case f::sched_wake::kPid: w.tid = pf.as_int32(); break;
          case f::sched_wake::kPrio: w.prio = pf.as_int32(); break;
          case f::sched_wake::kTargetCpu: w.target_cpu = pf.as_int32(); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      ev.payload = w;
      break;
    }
    case f::ftrace_event::kSchedMigrateTask: {
      model::SchedMigrate m;
      while (pr.Next(&pf)) {
        switch (pf.id) {
          case f::sched_migrate::kComm: m.comm = Comm(pf.as_string()); break;
          case f::sched_migrate::kPid: m.tid = pf.as_int32(); break;
          case f::sched_migrate::kPrio: m.prio = pf.as_int32(); break;
          case f::sched_migrate::kOrigCpu: m.orig_cpu = pf.as_int32(); break;
          case f::sched_migrate::kDestCpu: m.dest_cpu = pf.as_int32(); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      ev.payload = m;
      break;
    }
    case f::ftrace_event::kTaskNewtask: {
      // task_newtask fires in the parent: common_pid is the parent thread.
      model::ProcessFork fork;
      fork.parent_tid = common_pid;
      uint64_t clone_flags = 0;
      while (pr.Next(&pf)) {
        switch (pf.id) {
          case f::task_newtask::kPid: fork.child_tid = pf.as_int32(); break;
          case f::task_newtask::kComm: fork.child_comm = Comm(pf.as_string()); break;
          case f::task_newtask::kCloneFlags: clone_flags = pf.int_value; break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      fork.is_thread = (clone_flags & kCloneThread) != 0;
      fork.child_tgid = fork.is_thread ? 0 : fork.child_tid;
      ev.payload = fork;
      break;
    }
    case f::ftrace_event::kSchedProcessFork: {
      model::ProcessFork fork;
      while (pr.Next(&pf)) {
        switch (pf.id) {
          case f::process_fork::kParentComm: fork.parent_comm = Comm(pf.as_string()); break;
          case f::process_fork::kParentPid: fork.parent_tid = pf.as_int32(); break;
          case f::process_fork::kChildComm: fork.child_comm = Comm(pf.as_string()); break;
          case f::process_fork::kChildPid: fork.child_tid = pf.as_int32(); break;
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
    case f::ftrace_event::kSchedProcessExec: {
      model::ProcessExec x;
      while (pr.Next(&pf)) {
        switch (pf.id) {
          case f::process_exec::kFilename: x.filename = std::string(pf.as_string()); break;
          case f::process_exec::kPid: x.tid = pf.as_int32(); break;
          case f::process_exec::kOldPid: x.old_tid = pf.as_int32(); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      ev.payload = std::move(x);
      break;
    }
    case f::ftrace_event::kSchedProcessExit: {
      model::ProcessExit x;
      while (pr.Next(&pf)) {
        switch (pf.id) {
          case f::process_exit::kComm: x.comm = Comm(pf.as_string()); break;
          case f::process_exit::kPid: x.tid = pf.as_int32(); break;
          case f::process_exit::kTgid: x.tgid = pf.as_int32(); break;
          case f::process_exit::kPrio: x.prio = pf.as_int32(); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      ev.payload = x;
      break;
    }
    case f::ftrace_event::kTaskRename: {
      model::TaskRename x;
      while (pr.Next(&pf)) {
        switch (pf.id) {
          case f::task_rename::kPid: x.tid = pf.as_int32(); break;
          case f::task_rename::kOldcomm: x.old_comm = Comm(pf.as_string()); break;
          case f::task_rename::kNewcomm: x.new_comm = Comm(pf.as_string()); break;
          default: break;
        }
      }
      if (pr.error()) return fail();
      ev.payload = x;
      break;
    }
    // The most frequent full-format events reuse an event whose payload
    // already holds their type.
    case f::ftrace_event::kIrqHandlerEntry: {
      int32_t irq = 0;
      std::string_view name;
      while (pr.Next(&pf)) {
        if (pf.id == f::irq_entry::kIrq) irq = pf.as_int32();
        if (pf.id == f::irq_entry::kName) name = pf.as_string();
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
    case f::ftrace_event::kIrqHandlerExit: {
      auto* x = std::get_if<model::IrqExit>(&irq_exit_event_.payload);
      *x = {};
      while (pr.Next(&pf)) {
        if (pf.id == f::irq_exit::kIrq) x->irq = pf.as_int32();
        if (pf.id == f::irq_exit::kRet) x->ret = pf.as_int32();
      }
      if (pr.error()) return fail();
      return EmitCached(irq_exit_event_, ts, cpu, common_pid);
    }
    case f::ftrace_event::kSoftirqEntry:
    case f::ftrace_event::kSoftirqExit:
    case f::ftrace_event::kSoftirqRaise: {
      uint32_t vec = 0;
      while (pr.Next(&pf))
        if (pf.id == f::softirq::kVec) vec = pf.as_uint32();
      if (pr.error()) return fail();
      if (payload.id == f::ftrace_event::kSoftirqEntry) {
        std::get_if<model::SoftirqEntry>(&softirq_entry_event_.payload)->vec = vec;
        return EmitCached(softirq_entry_event_, ts, cpu, common_pid);
      }
      if (payload.id == f::ftrace_event::kSoftirqExit) {
        std::get_if<model::SoftirqExit>(&softirq_exit_event_.payload)->vec = vec;
        return EmitCached(softirq_exit_event_, ts, cpu, common_pid);
      }
      ev.payload = model::SoftirqRaise{vec};
      break;
    }
    case f::ftrace_event::kLocalTimerEntry:
    case f::ftrace_event::kLocalTimerExit: {
      int32_t vector = 0;
      while (pr.Next(&pf))
        if (pf.id == f::local_timer::kVector) vector = pf.as_int32();
      if (pr.error()) return fail();
      if (payload.id == f::ftrace_event::kLocalTimerEntry)
        ev.payload = model::VectorEntry{model::VectorKind::kLocalTimer, vector};
      else
        ev.payload = model::VectorExit{model::VectorKind::kLocalTimer, vector};
      break;
    }
    case f::ftrace_event::kIpiEntry:
    case f::ftrace_event::kIpiExit: {
      // ipi_entry's reason is the kernel's text ("Rescheduling interrupts",
      // "Function call interrupts", ...).
      std::string_view reason;
      while (pr.Next(&pf))
        if (pf.id == f::ipi::kReason) reason = pf.as_string();
      if (pr.error()) return fail();
      model::VectorKind kind = model::VectorKind::kPlatformIpi;
      if (reason.find("Resched") != std::string_view::npos) kind = model::VectorKind::kReschedule;
      else if (reason.find("single") != std::string_view::npos) kind = model::VectorKind::kCallFunctionSingle;
      else if (reason.find("Function") != std::string_view::npos) kind = model::VectorKind::kCallFunction;
      else if (reason.find("work") != std::string_view::npos) kind = model::VectorKind::kIrqWork;
      if (payload.id == f::ftrace_event::kIpiEntry) ev.payload = model::VectorEntry{kind, 0};
      else ev.payload = model::VectorExit{kind, 0};
      break;
    }
    case f::ftrace_event::kNetifReceiveSkb:
    case f::ftrace_event::kNapiGroReceiveEntry:
    case f::ftrace_event::kNetDevXmit:
    case f::ftrace_event::kKfreeSkb:
    case f::ftrace_event::kTcpRetransmitSkb: {
      model::NetTraceEvent n;
      n.ts = ts;
      n.cpu = cpu;
      n.tid = common_pid;
      switch (payload.id) {
        case f::ftrace_event::kNetifReceiveSkb: n.kind = model::NetTraceKind::kRxPacket; break;
        case f::ftrace_event::kNapiGroReceiveEntry: n.kind = model::NetTraceKind::kRxPacket; break;
        case f::ftrace_event::kNetDevXmit: n.kind = model::NetTraceKind::kTxPacket; break;
        case f::ftrace_event::kKfreeSkb: n.kind = model::NetTraceKind::kDrop; break;
        default: n.kind = model::NetTraceKind::kRetransmit; break;
      }
      while (pr.Next(&pf)) {
        if (payload.id == f::ftrace_event::kNetifReceiveSkb) {
          if (pf.id == f::netif_receive_skb::kName) n.device = pf.as_string();
          if (pf.id == f::netif_receive_skb::kLen) n.value = pf.as_int64();
        } else if (payload.id == f::ftrace_event::kNapiGroReceiveEntry) {
          if (pf.id == f::napi_gro_receive_entry::kName) n.device = pf.as_string();
          if (pf.id == f::napi_gro_receive_entry::kLen) n.value = pf.as_int64();
          if (pf.id == f::napi_gro_receive_entry::kQueueMapping) n.queue = pf.as_int32();
        } else if (payload.id == f::ftrace_event::kNetDevXmit) {
          if (pf.id == f::net_dev_xmit::kName) n.device = pf.as_string();
          if (pf.id == f::net_dev_xmit::kLen) n.value = pf.as_int64();
          if (pf.id == f::net_dev_xmit::kRc) n.budget = pf.as_int32();
        }
      }
      if (pr.error()) return fail();
      EmitNet(n);
      return true;
    }
    case f::ftrace_event::kGeneric:
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
    if (field.id == f::generic::kEventName) {
      name = field.as_string();
    } else if (field.id == f::generic::kField && field.type == WireType::kLengthDelimited &&
               g.count < GenericFields::kMax) {
      GenericFields::Value v;
      ProtoReader fr(field);
      ProtoField ff;
      while (fr.Next(&ff)) {
        switch (ff.id) {
          case f::generic::kFieldName: v.name = ff.as_string(); break;
          case f::generic::kFieldStrValue: v.str = ff.as_string(); v.is_str = true; break;
          case f::generic::kFieldIntValue:
          case f::generic::kFieldUintValue: v.num = ff.as_int64(); break;
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
