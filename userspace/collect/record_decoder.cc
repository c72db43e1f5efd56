#include "collect/record_decoder.h"

#include <algorithm>
#include <cstring>

#include "collect/records.h"
#include "common/strings.h"

namespace gpunoise::collect {
namespace {

template <typename T>
bool Load(std::span<const uint8_t> data, T* out) {
  if (data.size() < sizeof(T)) return false;
  std::memcpy(out, data.data(), sizeof(T));  // ring records are 8-byte aligned, but be safe
  return true;
}

model::TaskComm Comm(const char (&bytes)[GN_TASK_COMM_LEN]) {
  return model::TaskComm::FromBytes(bytes);
}

model::NetDevName DevName(const char (&bytes)[GN_NET_NAME_LEN]) {
  return model::NetDevName::FromBytes(bytes);
}

model::NetDevice Device(const gn_net_dev& dev, const char (&name)[GN_NET_NAME_LEN]) {
  return model::NetDevice{dev.netns, dev.ifindex, DevName(name)};
}

}  // namespace

size_t DecodeRecordEvents(std::span<const uint8_t> data, uint32_t cpu, std::span<model::Event, 2> out,
                          DecodeResult* result) {
  gn_header hdr;
  if (!Load(data, &hdr)) {
    *result = DecodeResult::kTooShort;
    return 0;
  }
  if (hdr.kind != GN_REC_SOFTIRQ_SLICE) {
    *result = DecodeRecord(data, cpu, &out[0]);
    return *result == DecodeResult::kOk ? 1 : 0;
  }
  gn_softirq_slice r;
  if (!Load(data, &r)) {
    *result = DecodeResult::kTooShort;
    return 0;
  }
  *result = DecodeResult::kOk;
  size_t n = 0;
  // entry_ts 0: the entry went out on its own, ahead of a nested record.
  if (r.entry_ts != 0) {
    model::Event& entry = out[n++];
    entry.ts = std::min(r.entry_ts, hdr.ts);
    entry.cpu = cpu;
    entry.tid = static_cast<int32_t>(hdr.tid);
    entry.common_flags = hdr.flags;
    entry.payload = model::SoftirqEntry{r.vec, r.raise_wait_ns, r.untimed_before};
  }
  model::Event& exit = out[n++];
  exit.ts = hdr.ts;
  exit.cpu = cpu;
  exit.tid = static_cast<int32_t>(hdr.tid);
  exit.common_flags = hdr.flags;
  exit.payload = model::SoftirqExit{r.vec};
  return n;
}

size_t FixedRecordSize(uint16_t kind) {
  switch (kind) {
    case GN_REC_SCHED_SWITCH: return sizeof(gn_sched_switch);
    case GN_REC_SCHED_WAKING:
    case GN_REC_SCHED_WAKEUP_NEW: return sizeof(gn_sched_wake);
    case GN_REC_SCHED_MIGRATE: return sizeof(gn_sched_migrate);
    case GN_REC_IRQ_ENTRY:
    case GN_REC_IRQ_EXIT: return sizeof(gn_irq);
    case GN_REC_SOFTIRQ_ENTRY:
    case GN_REC_SOFTIRQ_EXIT: return sizeof(gn_softirq);
    case GN_REC_VECTOR_ENTRY:
    case GN_REC_VECTOR_EXIT: return sizeof(gn_vector);
    case GN_REC_SOFTIRQ_SLICE: return sizeof(gn_softirq_slice);
  }
  return 0;
}

std::string_view CollectorOfKind(uint16_t kind) {
  if (kind >= GN_REC_SCHED_SWITCH && kind <= GN_REC_TASK_RENAME) return "sched";
  if (kind >= GN_REC_IRQ_ENTRY && kind <= GN_REC_SOFTIRQ_SLICE) return "irq";
  switch (kind) {
    case GN_REC_NAPI_POLL:
    case GN_REC_DQL_STALL: return "napi";
    case GN_REC_NET_RECEIVE:
    case GN_REC_NET_XMIT:
    case GN_REC_NET_XMIT_TIMEOUT:
    case GN_REC_TCP_RETRANSMIT:
    case GN_REC_GRO_ENTRY:
    case GN_REC_GRO_EXIT: return "netdev";
    case GN_REC_SKB_DROP: return "drops";
    case GN_REC_NIC_EVENT: return "nic";
  }
  return {};
}

std::string_view RecordKindName(uint16_t kind) {
  switch (kind) {
    case GN_REC_SCHED_SWITCH: return "sched_switch";
    case GN_REC_SCHED_WAKING: return "sched_waking";
    case GN_REC_SCHED_WAKEUP_NEW: return "sched_wakeup_new";
    case GN_REC_SCHED_MIGRATE: return "sched_migrate_task";
    case GN_REC_PROCESS_FORK: return "sched_process_fork";
    case GN_REC_PROCESS_EXEC: return "sched_process_exec";
    case GN_REC_PROCESS_EXIT: return "sched_process_exit";
    case GN_REC_TASK_RENAME: return "task_rename";
    case GN_REC_IRQ_ENTRY: return "irq_handler_entry";
    case GN_REC_IRQ_EXIT: return "irq_handler_exit";
    case GN_REC_SOFTIRQ_ENTRY: return "softirq_entry";
    case GN_REC_SOFTIRQ_EXIT: return "softirq_exit";
    case GN_REC_VECTOR_ENTRY: return "vector_entry";
    case GN_REC_VECTOR_EXIT: return "vector_exit";
    case GN_REC_SOFTIRQ_SLICE: return "softirq_entry+exit";
    case GN_REC_NAPI_POLL: return "napi_poll";
    case GN_REC_NET_RECEIVE: return "netif_receive_skb";
    case GN_REC_NET_XMIT: return "net_dev_xmit";
    case GN_REC_NET_XMIT_TIMEOUT: return "net_dev_xmit_timeout";
    case GN_REC_DQL_STALL: return "dql_stall_detected";
    case GN_REC_TCP_RETRANSMIT: return "tcp_retransmit_skb";
    case GN_REC_GRO_ENTRY: return "napi_gro_receive_entry";
    case GN_REC_GRO_EXIT: return "napi_gro_receive_exit";
    case GN_REC_SKB_DROP: return "kfree_skb";
    case GN_REC_NIC_EVENT: return "nic_driver_event";
  }
  return {};
}

DecodeResult DecodeRecord(std::span<const uint8_t> data, uint32_t cpu, model::Event* out) {
  gn_header hdr;
  if (!Load(data, &hdr)) return DecodeResult::kTooShort;
  out->ts = hdr.ts;
  out->cpu = cpu;
  out->tid = static_cast<int32_t>(hdr.tid);
  out->common_flags = hdr.flags;

#define GN_LOAD(type, var) \
  type var;                \
  if (!Load(data, &var)) return DecodeResult::kTooShort

  switch (hdr.kind) {
    case GN_REC_SCHED_SWITCH: {
      GN_LOAD(gn_sched_switch, r);
      model::SchedSwitch e;
      e.prev_tid = static_cast<int32_t>(r.hdr.tid);
      e.prev_tgid = static_cast<int32_t>(r.prev_tgid);
      e.prev_state = r.prev_state;
      e.next_tid = static_cast<int32_t>(r.next_tid);
      e.next_tgid = static_cast<int32_t>(r.next_tgid);
      e.next_prio = r.next_prio;
      e.next_comm = Comm(r.next_comm);
      out->payload = e;
      return DecodeResult::kOk;
    }
    case GN_REC_SCHED_WAKING:
    case GN_REC_SCHED_WAKEUP_NEW: {
      GN_LOAD(gn_sched_wake, r);
      model::SchedWaking e;
      e.tid = static_cast<int32_t>(r.tid);
      e.tgid = static_cast<int32_t>(r.tgid);
      e.prio = r.prio;
      e.target_cpu = r.target_cpu;
      e.comm = Comm(r.comm);
      e.is_new_task = hdr.kind == GN_REC_SCHED_WAKEUP_NEW;
      out->payload = e;
      return DecodeResult::kOk;
    }
    case GN_REC_SCHED_MIGRATE: {
      GN_LOAD(gn_sched_migrate, r);
      model::SchedMigrate e;
      e.tid = static_cast<int32_t>(r.tid);
      e.tgid = static_cast<int32_t>(r.tgid);
      e.prio = r.prio;
      e.orig_cpu = r.orig_cpu;
      e.dest_cpu = r.dest_cpu;
      e.comm = Comm(r.comm);
      out->payload = e;
      return DecodeResult::kOk;
    }
    case GN_REC_PROCESS_FORK: {
      GN_LOAD(gn_process_fork, r);
      model::ProcessFork e;
      e.parent_tid = static_cast<int32_t>(r.hdr.tid);
      e.parent_tgid = static_cast<int32_t>(r.parent_tgid);
      e.child_tid = static_cast<int32_t>(r.child_tid);
      e.child_tgid = static_cast<int32_t>(r.child_tgid);
      e.is_thread = r.is_thread != 0;
      e.parent_comm = Comm(r.parent_comm);
      e.child_comm = Comm(r.child_comm);
      out->payload = e;
      return DecodeResult::kOk;
    }
    case GN_REC_PROCESS_EXEC: {
      GN_LOAD(gn_process_exec, r);
      model::ProcessExec e;
      e.tid = static_cast<int32_t>(r.hdr.tid);
      e.tgid = static_cast<int32_t>(r.tgid);
      e.old_tid = static_cast<int32_t>(r.old_tid);
      e.comm = Comm(r.comm);
      e.filename = model::ExecPath(FixedCString(r.filename, sizeof(r.filename)));
      out->payload = std::move(e);
      return DecodeResult::kOk;
    }
    case GN_REC_PROCESS_EXIT: {
      GN_LOAD(gn_process_exit, r);
      model::ProcessExit e;
      e.tid = static_cast<int32_t>(r.hdr.tid);
      e.tgid = static_cast<int32_t>(r.tgid);
      e.prio = r.prio;
      e.comm = Comm(r.comm);
      out->payload = e;
      return DecodeResult::kOk;
    }
    case GN_REC_TASK_RENAME: {
      GN_LOAD(gn_task_rename, r);
      model::TaskRename e;
      e.tid = static_cast<int32_t>(r.tid);
      e.tgid = static_cast<int32_t>(r.tgid);
      e.old_comm = Comm(r.oldcomm);
      e.new_comm = Comm(r.newcomm);
      out->payload = e;
      return DecodeResult::kOk;
    }
    case GN_REC_IRQ_ENTRY: {
      GN_LOAD(gn_irq, r);
      out->payload = model::IrqEntry{r.irq};
      return DecodeResult::kOk;
    }
    case GN_REC_IRQ_EXIT: {
      GN_LOAD(gn_irq, r);
      out->payload = model::IrqExit{r.irq, r.ret};
      return DecodeResult::kOk;
    }
    case GN_REC_SOFTIRQ_ENTRY: {
      GN_LOAD(gn_softirq, r);
      out->payload = model::SoftirqEntry{r.vec, r.raise_wait_ns, r.untimed_before};
      return DecodeResult::kOk;
    }
    case GN_REC_SOFTIRQ_EXIT: {
      GN_LOAD(gn_softirq, r);
      out->payload = model::SoftirqExit{r.vec};
      return DecodeResult::kOk;
    }
    case GN_REC_VECTOR_ENTRY: {
      GN_LOAD(gn_vector, r);
      out->payload = model::VectorEntry{static_cast<model::VectorKind>(r.kind), r.vector};
      return DecodeResult::kOk;
    }
    case GN_REC_VECTOR_EXIT: {
      GN_LOAD(gn_vector, r);
      out->payload = model::VectorExit{static_cast<model::VectorKind>(r.kind), r.vector};
      return DecodeResult::kOk;
    }
    case GN_REC_NAPI_POLL: {
      GN_LOAD(gn_napi_poll_rec, r);
      out->payload = model::NapiPoll{Device(r.dev, r.name), r.napi_id, r.queue, r.work, r.budget};
      return DecodeResult::kOk;
    }
    case GN_REC_NET_RECEIVE: {
      GN_LOAD(gn_net_pkt_rec, r);
      out->payload = model::NetReceive{Device(r.dev, r.name), r.skbaddr, r.len, r.queue, r.segs};
      return DecodeResult::kOk;
    }
    case GN_REC_NET_XMIT: {
      GN_LOAD(gn_net_pkt_rec, r);
      out->payload =
          model::NetTransmit{Device(r.dev, r.name), r.skbaddr, r.len, r.rc, r.queue, r.segs};
      return DecodeResult::kOk;
    }
    case GN_REC_NET_XMIT_TIMEOUT: {
      GN_LOAD(gn_xmit_timeout_rec, r);
      out->payload = model::NetTxTimeout{Device(r.dev, r.name), r.queue, DevName(r.driver)};
      return DecodeResult::kOk;
    }
    case GN_REC_DQL_STALL: {
      GN_LOAD(gn_dql_stall_rec, r);
      model::DqlStall e;
      e.thrs = r.thrs;
      e.len = r.len;
      e.last_reap = r.last_reap;
      e.hist_head = r.hist_head;
      e.now = r.now;
      for (size_t i = 0; i < e.hist.size(); ++i) e.hist[i] = r.hist[i];
      out->payload = e;
      return DecodeResult::kOk;
    }
    case GN_REC_TCP_RETRANSMIT: {
      GN_LOAD(gn_tcp_retransmit_rec, r);
      model::TcpRetransmit e;
      e.skbaddr = r.skbaddr;
      e.skaddr = r.skaddr;
      e.state = r.state;
      e.sport = r.sport;
      e.dport = r.dport;
      e.family = r.family;
      e.err = r.err;
      std::memcpy(e.saddr.data(), r.saddr, e.saddr.size());
      std::memcpy(e.daddr.data(), r.daddr, e.daddr.size());
      out->payload = e;
      return DecodeResult::kOk;
    }
    case GN_REC_GRO_ENTRY: {
      GN_LOAD(gn_gro_entry_rec, r);
      out->payload = model::GroReceiveEntry{Device(r.dev, r.name), r.skbaddr, r.napi_id,
                                            r.len, r.data_len, r.queue_mapping};
      return DecodeResult::kOk;
    }
    case GN_REC_GRO_EXIT: {
      GN_LOAD(gn_gro_exit_rec, r);
      out->payload = model::GroReceiveExit{r.ret};
      return DecodeResult::kOk;
    }
    case GN_REC_SKB_DROP: {
      GN_LOAD(gn_skb_drop_rec, r);
      out->payload = model::SkbDrop{Device(r.dev, r.name), r.skbaddr, r.location, r.reason,
                                    r.protocol};
      return DecodeResult::kOk;
    }
    case GN_REC_NIC_EVENT: {
      GN_LOAD(gn_nic_event_rec, r);
      out->payload = model::NicEvent{r.event, DevName(r.dev)};
      return DecodeResult::kOk;
    }
  }
#undef GN_LOAD
  return DecodeResult::kUnknownKind;
}

}  // namespace gpunoise::collect
