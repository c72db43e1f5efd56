/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The record mix the ring benchmarks write (bench/ring_fill.bpf.c,
 * bench/scale_fill.bpf.c), through the collectors' own reservation path:
 * shaped like a switch-heavy CPU. */
#ifndef GPUNOISE_BENCH_FILL_MIX_BPF_H
#define GPUNOISE_BENCH_FILL_MIX_BPF_H

#include "../bpf/common.bpf.h"
#include "../bpf/irq.h"
#include "../bpf/sched.h"

/* Eight threads (a power of two: the verifier sees the index is bounded). */
const char gn_bench_comms[8][GN_TASK_COMM_LEN] = {
	"python3", "pt_main_thread", "swapper/1", "kworker/1:1",
	"nccl-proxy", "pt_data_worker", "ksoftirqd/1", "sshd",
};

/* One softirq entry or exit in twenty records, a waking in three, the rest
 * context switches: the mix bench/record_path_benchmark.cc encodes. */
static __always_inline long gn_fill_record(__u64 i, __u32 ring)
{
	__u64 wake;
	__u32 who = i & 7;
	if (i % 20 == 19) {
		__u16 kind = (i % 40 == 39) ? GN_REC_SOFTIRQ_EXIT : GN_REC_SOFTIRQ_ENTRY;
		struct gn_softirq *r = (struct gn_softirq *)gn_reserve_on(ring, sizeof(struct gn_softirq), kind, &wake);
		if (!r)
			goto full;
		r->vec = 3;
		r->raise_wait_ns = kind == GN_REC_SOFTIRQ_ENTRY ? 280 : 0;
		gn_submit(r, wake);
	} else if (i % 3 == 0) {
		struct gn_sched_wake *r = (struct gn_sched_wake *)gn_reserve_on(ring, sizeof(struct gn_sched_wake), GN_REC_SCHED_WAKING, &wake);
		if (!r)
			goto full;
		r->tid = 1000 + who;
		r->tgid = 1000 + who;
		r->prio = 120;
		r->target_cpu = 1;
		bpf_probe_read_kernel(r->comm, sizeof(r->comm), gn_bench_comms[who]);
		gn_submit(r, wake);
	} else {
		struct gn_sched_switch *r = (struct gn_sched_switch *)gn_reserve_on(ring, sizeof(struct gn_sched_switch), GN_REC_SCHED_SWITCH, &wake);
		if (!r)
			goto full;
		r->prev_tgid = 1000;
		r->prev_state = (i % 4) ? 1 : 0x100;
		r->next_tid = 1000 + who;
		r->next_tgid = 1000 + who;
		r->next_prio = 120;
		r->pad = 0;
		bpf_probe_read_kernel(r->next_comm, sizeof(r->next_comm), gn_bench_comms[who]);
		gn_submit(r, wake);
	}
	return 0;
full:
	return 1; /* stop: the ring is full */
}

#endif /* GPUNOISE_BENCH_FILL_MIX_BPF_H */
