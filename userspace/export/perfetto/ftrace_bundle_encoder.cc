#include "export/perfetto/ftrace_bundle_encoder.h"

#include <type_traits>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {
namespace {

constexpr uint64_t kCloneThread = 0x00010000;  // include/uapi/linux/sched.h

void SetComm(std::string* out, const model::TaskComm& comm) {
  std::string_view v = comm.view();
  out->assign(v.data(), v.size());
}

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace

bool HasFtraceForm(const model::Event& event) {
  if (auto* v = std::get_if<model::VectorEntry>(&event.payload))
    return v->kind == model::VectorKind::kLocalTimer;
  if (auto* v = std::get_if<model::VectorExit>(&event.payload))
    return v->kind == model::VectorKind::kLocalTimer;
  return true;
}

void FtraceBundleEncoder::Encode(const BundleInfo& info, std::span<const model::Event> events,
                                 IrqNameSource& irq_names, TracePacket* packet) {
  FtraceEventBundle* bundle = packet->mutable_ftrace_events();
  bundle->set_cpu(info.cpu);
  if (info.lost_events) bundle->set_lost_events(true);
  if (info.previous_bundle_end_timestamp)
    bundle->set_previous_bundle_end_timestamp(info.previous_bundle_end_timestamp);

  for (const model::Event& ev : events) {
    auto new_event = [&]() {
      FtraceEvent* fe = bundle->add_event();
      fe->set_timestamp(ev.ts);
      fe->set_pid(static_cast<uint32_t>(ev.tid));
      return fe;
    };
    std::visit(
        Overloaded{
            [&](const model::SchedSwitch& e) { compact_.AddSwitch(ev.ts, e); },
            [&](const model::SchedWaking& e) {
              if (!e.is_new_task) {
                compact_.AddWaking(ev.ts, e);
                return;
              }
              auto* w = new_event()->mutable_sched_wakeup_new();
              SetComm(w->mutable_comm(), e.comm);
              w->set_pid(e.tid);
              w->set_prio(e.prio);
              w->set_success(1);
              w->set_target_cpu(e.target_cpu);
            },
            [&](const model::SchedMigrate& e) {
              auto* m = new_event()->mutable_sched_migrate_task();
              SetComm(m->mutable_comm(), e.comm);
              m->set_pid(e.tid);
              m->set_prio(e.prio);
              m->set_orig_cpu(e.orig_cpu);
              m->set_dest_cpu(e.dest_cpu);
            },
            [&](const model::ProcessFork& e) {
              // task_newtask is what the trace processor uses to bind a new
              // thread to its process (clone flags) and to name it.
              auto* t = new_event()->mutable_task_newtask();
              t->set_pid(e.child_tid);
              SetComm(t->mutable_comm(), e.child_comm);
              t->set_clone_flags(e.is_thread ? kCloneThread : 0);
            },
            [&](const model::ProcessExec& e) {
              auto* x = new_event()->mutable_sched_process_exec();
              x->set_filename(e.filename);
              x->set_pid(e.tid);
              x->set_old_pid(e.old_tid);
            },
            [&](const model::ProcessExit& e) {
              auto* x = new_event()->mutable_sched_process_exit();
              SetComm(x->mutable_comm(), e.comm);
              x->set_pid(e.tid);
              x->set_tgid(e.tgid);
              x->set_prio(e.prio);
            },
            [&](const model::TaskRename& e) {
              auto* r = new_event()->mutable_task_rename();
              r->set_pid(e.tid);
              SetComm(r->mutable_oldcomm(), e.old_comm);
              SetComm(r->mutable_newcomm(), e.new_comm);
            },
            [&](const model::IrqEntry& e) {
              auto* i = new_event()->mutable_irq_handler_entry();
              i->set_irq(e.irq);
              std::string_view name = irq_names.IrqName(e.irq);
              i->set_name(name.data(), name.size());
            },
            [&](const model::IrqExit& e) {
              auto* i = new_event()->mutable_irq_handler_exit();
              i->set_irq(e.irq);
              i->set_ret(e.ret);
            },
            [&](const model::SoftirqEntry& e) { new_event()->mutable_softirq_entry()->set_vec(e.vec); },
            [&](const model::SoftirqExit& e) { new_event()->mutable_softirq_exit()->set_vec(e.vec); },
            [&](const model::SoftirqRaise& e) { new_event()->mutable_softirq_raise()->set_vec(e.vec); },
            [&](const model::VectorEntry& e) {
              if (e.kind == model::VectorKind::kLocalTimer)
                new_event()->mutable_local_timer_entry()->set_vector(e.vector);
            },
            [&](const model::VectorExit& e) {
              if (e.kind == model::VectorKind::kLocalTimer)
                new_event()->mutable_local_timer_exit()->set_vector(e.vector);
            },
        },
        ev.payload);
  }
  if (!compact_.empty()) compact_.FlushTo(bundle->mutable_compact_sched());
}

}  // namespace gpunoise::perfetto
