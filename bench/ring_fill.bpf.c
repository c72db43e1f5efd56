/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Producer for bench/ring_consume_benchmark.cc: fills gpunoise's per-CPU
 * ring with records shaped like a switch-heavy CPU, through the collectors'
 * own gn_reserve/gn_submit, when user space runs it with BPF_PROG_TEST_RUN.
 * It is never attached to anything, so the benchmark does not depend on
 * what else the machine is doing. */
#include "../bpf/common.bpf.h"
#include "../bpf/irq.h"
#include "../bpf/sched.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Records per run; set by user space before each BPF_PROG_TEST_RUN. */
__u32 gn_fill_count = 0;
/* Records that did not fit (the ring was full); user space checks it is 0. */
__u64 gn_fill_failed = 0;

/* Eight threads (a power of two: the verifier sees the index is bounded). */
const char gn_bench_comms[8][GN_TASK_COMM_LEN] = {
	"python3", "pt_main_thread", "swapper/1", "kworker/1:1",
	"nccl-proxy", "pt_data_worker", "ksoftirqd/1", "sshd",
};

/* One softirq entry or exit in twenty records, a waking in three, the rest
 * context switches: the mix bench/record_path_benchmark.cc encodes. */
static long gn_fill_one(__u64 i, void *unused)
{
	__u64 wake;
	__u32 who = i & 7;
	if (i % 20 == 19) {
		__u16 kind = (i % 40 == 39) ? GN_REC_SOFTIRQ_EXIT : GN_REC_SOFTIRQ_ENTRY;
		struct gn_softirq *r = GN_RESERVE(struct gn_softirq, kind, &wake);
		if (!r)
			goto full;
		r->vec = 3;
		r->pad = 0;
		gn_submit(r, wake);
	} else if (i % 3 == 0) {
		struct gn_sched_wake *r = GN_RESERVE(struct gn_sched_wake, GN_REC_SCHED_WAKING, &wake);
		if (!r)
			goto full;
		r->tid = 1000 + who;
		r->tgid = 1000 + who;
		r->prio = 120;
		r->target_cpu = 1;
		bpf_probe_read_kernel(r->comm, sizeof(r->comm), gn_bench_comms[who]);
		gn_submit(r, wake);
	} else {
		struct gn_sched_switch *r = GN_RESERVE(struct gn_sched_switch, GN_REC_SCHED_SWITCH, &wake);
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
	__sync_fetch_and_add(&gn_fill_failed, 1);
	return 1; /* stop: the ring is full */
}

SEC("raw_tp")
int gn_bench_fill(void *ctx)
{
	bpf_loop(gn_fill_count, gn_fill_one, NULL, 0);
	return 0;
}
