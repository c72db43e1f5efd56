/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Producer for bench/ring_consume_benchmark.cc: fills gpunoise's per-CPU
 * ring with records shaped like a switch-heavy CPU, through the collectors'
 * own gn_reserve/gn_submit, when user space runs it with BPF_PROG_TEST_RUN.
 * It is never attached to anything, so the benchmark does not depend on
 * what else the machine is doing. */
#include "fill_mix.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Records per run; set by user space before each BPF_PROG_TEST_RUN. */
__u32 gn_fill_count = 0;
/* Records that did not fit (the ring was full); user space checks it is 0. */
__u64 gn_fill_failed = 0;

static long gn_fill_one(__u64 i, void *unused)
{
	if (gn_fill_record(i, bpf_get_smp_processor_id()) == 0)
		return 0;
	__sync_fetch_and_add(&gn_fill_failed, 1);
	return 1; /* stop: the ring is full */
}

SEC("raw_tp")
int gn_bench_fill(void *ctx)
{
	bpf_loop(gn_fill_count, gn_fill_one, NULL, 0);
	return 0;
}
