#include "export/perfetto/ftrace_bundle_encoder.h"

#include <cstring>
#include <type_traits>

#include "export/perfetto/protos/perfetto_trace_subset.pb.h"

namespace gpunoise::perfetto {
namespace {

constexpr uint64_t kCloneThread = 0x00010000;  // include/uapi/linux/sched.h

void SetComm(std::string* out, const model::TaskComm& comm) {
  std::string_view v = comm.view();
  out->assign(v.data(), v.size());
}

void SetName(std::string* out, const model::NetDevName& name) {
  std::string_view v = name.view();
  out->assign(v.data(), v.size());
}

GenericFtraceEvent::Field* AddField(GenericFtraceEvent* g, std::string_view name) {
  auto* f = g->add_field();
  f->set_name(name.data(), name.size());
  return f;
}
void AddStr(GenericFtraceEvent* g, std::string_view name, std::string_view value) {
  AddField(g, name)->set_str_value(value.data(), value.size());
}
void AddInt(GenericFtraceEvent* g, std::string_view name, int64_t value) {
  AddField(g, name)->set_int_value(value);
}
void AddUint(GenericFtraceEvent* g, std::string_view name, uint64_t value) {
  AddField(g, name)->set_uint_value(value);
}

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
            [&](const model::NapiPoll& e) {
              // Perfetto has no napi_poll message: generic, fields as the
              // tracepoint names them.
              auto* g = new_event()->mutable_generic();
              g->set_event_name("napi_poll");
              AddStr(g, "dev_name", e.dev.name.view());
              AddInt(g, "work", e.work);
              AddInt(g, "budget", e.budget);
              AddUint(g, "napi_id", e.napi_id);
              AddInt(g, "queue", e.queue);
            },
            [&](const model::NetReceive& e) {
              auto* r = new_event()->mutable_netif_receive_skb();
              r->set_len(e.len);
              SetName(r->mutable_name(), e.dev.name);
              r->set_skbaddr(e.skbaddr);
            },
            [&](const model::NetTransmit& e) {
              auto* x = new_event()->mutable_net_dev_xmit();
              x->set_len(e.len);
              SetName(x->mutable_name(), e.dev.name);
              x->set_rc(e.rc);
              x->set_skbaddr(e.skbaddr);
            },
            [&](const model::NetTxTimeout& e) {
              auto* g = new_event()->mutable_generic();
              g->set_event_name("net_dev_xmit_timeout");
              AddStr(g, "name", e.dev.name.view());
              AddStr(g, "driver", e.driver.view());
              AddInt(g, "queue_index", e.queue);
            },
            [&](const model::DqlStall& e) {
              auto* g = new_event()->mutable_generic();
              g->set_event_name("dql_stall_detected");
              AddUint(g, "thrs", e.thrs);
              AddUint(g, "len", e.len);
              AddUint(g, "last_reap", e.last_reap);
              AddUint(g, "hist_head", e.hist_head);
              AddUint(g, "now", e.now);
              for (size_t i = 0; i < e.hist.size(); ++i)
                AddUint(g, "hist" + std::to_string(i), e.hist[i]);
            },
            [&](const model::TcpRetransmit& e) {
              auto* t = new_event()->mutable_tcp_retransmit_skb();
              t->set_daddr(Ipv4Word(e.daddr));
              t->set_dport(e.dport);
              t->set_saddr(Ipv4Word(e.saddr));
              t->set_skaddr(e.skaddr);
              t->set_skbaddr(e.skbaddr);
              t->set_sport(e.sport);
              t->set_state(e.state);
            },
            [&](const model::GroReceiveEntry& e) {
              auto* g = new_event()->mutable_napi_gro_receive_entry();
              g->set_data_len(e.data_len);
              g->set_len(e.len);
              SetName(g->mutable_name(), e.dev.name);
              g->set_napi_id(e.napi_id);
              g->set_queue_mapping(e.queue_mapping);
              g->set_skbaddr(e.skbaddr);
            },
            [&](const model::GroReceiveExit& e) {
              new_event()->mutable_napi_gro_receive_exit()->set_ret(e.ret);
            },
            [&](const model::SkbDrop& e) {
              // Perfetto's kfree_skb has no reason field; reasons are in the
              // per-device drop counters (export/perfetto/net_tracks.h).
              auto* k = new_event()->mutable_kfree_skb();
              k->set_location(e.location);
              k->set_protocol(e.protocol);
              k->set_skbaddr(e.skbaddr);
            },
            [&](const model::NicEvent& e) {
              auto* g = new_event()->mutable_generic();
              std::string_view full = e.event < nic_event_names_.size()
                                          ? std::string_view(nic_event_names_[e.event])
                                          : std::string_view("nic/unknown");
              auto slash = full.find('/');
              std::string_view event = slash == full.npos ? full : full.substr(slash + 1);
              std::string_view category = slash == full.npos ? "" : full.substr(0, slash);
              g->set_event_name(event.data(), event.size());
              AddStr(g, "category", category);
              AddStr(g, "dev", e.dev.view());
            },
        },
        ev.payload);
  }
  if (!compact_.empty()) compact_.FlushTo(bundle->mutable_compact_sched());
}

}  // namespace gpunoise::perfetto
