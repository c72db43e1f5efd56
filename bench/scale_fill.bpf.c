/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Producer of the scale model (bench/scale_model.cc): writes the benchmark
 * record mix into the ring its caller names, so that a small machine can
 * fill as many rings as a 256-CPU node has. BPF_PROG_TEST_RUN runs raw_tp
 * programs (not tp_btf or classic tracepoints), with the arguments below as
 * the context:
 *   args[0]: the ring (the CPU index it stands for)
 *   args[1]: records to write
 *   args[2]: sequence number of the first (keeps the mix going across runs)
 * It returns how many it wrote; it stops at the first that did not fit. */
#include "fill_mix.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct gn_scale_loop {
	__u32 ring;
	__u32 written;
	__u64 first;
};

static long gn_scale_one(__u64 i, void *ctx)
{
	struct gn_scale_loop *loop = ctx;
	if (gn_fill_record(loop->first + i, loop->ring) != 0)
		return 1; /* the ring is full (counted in gn_lost_kinds) */
	loop->written++;
	return 0;
}

SEC("raw_tp")
int gn_scale_fill(struct bpf_raw_tracepoint_args *ctx)
{
	struct gn_scale_loop loop = {
		.ring = (__u32)ctx->args[0],
		.written = 0,
		.first = ctx->args[2],
	};
	bpf_loop((__u32)ctx->args[1], gn_scale_one, &loop, 0);
	return loop.written;
}
