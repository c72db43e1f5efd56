// The eBPF record layouts (bpf/*.h) as user space sees them, with the layout
// pinned: a mismatch between the two compilers fails the build, not a trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

extern "C" {
#include "bpf/irq.h"
#include "bpf/net.h"
#include "bpf/sched.h"
}

namespace gpunoise::collect {

static_assert(sizeof(gn_header) == 16);
static_assert(offsetof(gn_header, ts) == 0);
static_assert(offsetof(gn_header, kind) == 8);
static_assert(offsetof(gn_header, tid) == 12);

static_assert(sizeof(gn_batch_hdr) == 40);
static_assert(offsetof(gn_batch_hdr, first_seq) == 24);

static_assert(sizeof(gn_sched_switch) == 56);
static_assert(offsetof(gn_sched_switch, prev_state) == 20);
static_assert(offsetof(gn_sched_switch, next_comm) == 40);
static_assert(sizeof(gn_sched_wake) == 48);
static_assert(offsetof(gn_sched_wake, comm) == 32);
static_assert(sizeof(gn_sched_migrate) == 56);
static_assert(sizeof(gn_process_fork) == 136);
static_assert(offsetof(gn_process_fork, ns_level) == 64);
static_assert(offsetof(gn_process_fork, ns) == 72);
static_assert(sizeof(gn_pidns_ids) == 16);
static_assert(sizeof(gn_process_exec) == 168);
static_assert(sizeof(gn_process_exit) == 40);
static_assert(sizeof(gn_task_rename) == 56);
static_assert(sizeof(gn_irq) == 24);
static_assert(sizeof(gn_softirq) == 24);
static_assert(sizeof(gn_softirq_slice) == 32);
static_assert(offsetof(gn_softirq_slice, entry_ts) == 16);
static_assert(sizeof(gn_cpu_context) == 64);
static_assert(sizeof(gn_softirq_cpu) == 256);
static_assert(sizeof(gn_vector) == 24);

// Network records (bpf/net.h).
static_assert(sizeof(gn_net_dev) == 8);
static_assert(sizeof(gn_napi_poll_rec) == 56);
static_assert(offsetof(gn_napi_poll_rec, work) == 32);
static_assert(offsetof(gn_napi_poll_rec, name) == 40);
static_assert(sizeof(gn_net_pkt_rec) == 64);
static_assert(offsetof(gn_net_pkt_rec, skbaddr) == 24);
static_assert(offsetof(gn_net_pkt_rec, segs) == 44);
static_assert(offsetof(gn_net_pkt_rec, name) == 48);
static_assert(sizeof(gn_gro_entry_rec) == 64);
static_assert(offsetof(gn_gro_entry_rec, queue_mapping) == 44);
static_assert(sizeof(gn_gro_exit_rec) == 24);
static_assert(sizeof(gn_xmit_timeout_rec) == 64);
static_assert(offsetof(gn_xmit_timeout_rec, driver) == 48);
static_assert(sizeof(gn_dql_stall_rec) == 80);
static_assert(offsetof(gn_dql_stall_rec, hist) == 48);
static_assert(sizeof(gn_tcp_retransmit_rec) == 80);
static_assert(offsetof(gn_tcp_retransmit_rec, err) == 44);
static_assert(offsetof(gn_tcp_retransmit_rec, saddr) == 48);
static_assert(sizeof(gn_skb_drop_rec) == 64);
static_assert(offsetof(gn_skb_drop_rec, reason) == 40);
static_assert(sizeof(gn_nic_event_rec) == 40);
static_assert(sizeof(gn_dev_key) == 16);
static_assert(sizeof(gn_dev_val) == 24);
static_assert(sizeof(gn_napi_key) == 24);
static_assert(sizeof(gn_napi_val) == 24);
static_assert(sizeof(gn_drop_key) == 24);
static_assert(offsetof(gn_drop_key, location) == 16);
static_assert(sizeof(gn_drop_val) == 16);
static_assert(sizeof(gn_nic_key) == 24);
static_assert(sizeof(gn_nic_field) == 8);

// The events a ring record holds: a batch's records (at least 1, for an
// empty flush), a softirq slice's entry and exit, else 1. What `record
// --drain-batch` counts, so that a drain reads as many events whichever way
// the kernel wrote them.
inline uint64_t EventsInRingRecord(std::span<const uint8_t> data) {
  uint16_t kind = 0;
  if (data.size() >= sizeof(gn_header)) std::memcpy(&kind, data.data() + offsetof(gn_header, kind), sizeof(kind));
  if (kind == GN_REC_SOFTIRQ_SLICE && data.size() >= sizeof(gn_softirq_slice)) {
    uint64_t entry_ts = 0;
    std::memcpy(&entry_ts, data.data() + offsetof(gn_softirq_slice, entry_ts), sizeof(entry_ts));
    return entry_ts ? 2 : 1;
  }
  if (kind != GN_REC_BATCH || data.size() < sizeof(gn_batch_hdr)) return 1;
  uint16_t count = 0;
  std::memcpy(&count, data.data() + offsetof(gn_batch_hdr, count), sizeof(count));
  return count ? count : 1;
}

}  // namespace gpunoise::collect
